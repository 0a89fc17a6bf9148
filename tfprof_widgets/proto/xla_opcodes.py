"""Facts about the opcodes of XLA's HLO (``xla_hlo.proto``'s ``HloInstructionProto.opcode``)
that both the HLO reader and XLA's cost model need, kept once."""

# Opcodes XLA calls elementwise (HloInstruction::IsElementwise for these opcodes).
ELEMENTWISE = frozenset(
    "abs add and atan2 bitcast-convert cbrt ceil clamp clz compare complex convert cosine "
    "divide erf exponential exponential-minus-one floor imag is-finite log log-plus-one "
    "logistic maximum minimum multiply negate not or popcnt power real reduce-precision "
    "remainder round-nearest-afz round-nearest-even rsqrt select shift-left "
    "shift-right-arithmetic shift-right-logical sign sine sqrt stochastic-convert subtract "
    "tan tanh xor".split()
)
