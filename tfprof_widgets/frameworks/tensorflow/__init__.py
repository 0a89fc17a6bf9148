"""TensorFlow's rules (:mod:`.rules`), its op names (:mod:`.op_names`, with the C parser
``_tf_ops``), and the analyses only TF captures have: tf.data bottlenecks (:mod:`.tf_data`)
and TF1's tfprof tables and advisor (:mod:`.tfprof_tables`, :mod:`.tfprof_advice`).

Public names (what the package root and the views use): :class:`TfDataSummary`,
:func:`tf_data_summary`, :func:`tfprof_table`, :func:`total_parameters`.
"""

from ...analysis.results import Analysis
from .rules import TensorFlow
from .tf_data import TfDataSummary, tf_data_summary
from .tfprof_tables import tfprof_table, total_parameters

# The framework's rules, as the registry asks them.
FRAMEWORK = TensorFlow()

_HERE = "tfprof_widgets.frameworks.tensorflow."
# The analyses only TF captures have, as run attributes (see tfprof_widgets.catalog.ANALYSES).
ANALYSES = (
    Analysis("tf_data", _HERE + "tf_data:tf_data", "TfDataSummary"),
    Analysis("tf_data_bottleneck", _HERE + "tf_data:tf_data_bottleneck", "TF_DATA_BOTTLENECK"),
    Analysis("tfprof_advice", _HERE + "tfprof_advice:tfprof_advice", "TFPROF_ADVICE"),
    Analysis("total_float_ops", _HERE + "tfprof_tables:total_float_ops", "int"),
    Analysis("total_parameters", _HERE + "tfprof_tables:total_parameters", "int"),
)

__all__ = [
    "ANALYSES",
    "FRAMEWORK",
    "TensorFlow",
    "TfDataSummary",
    "tf_data_summary",
    "tfprof_table",
    "total_parameters",
]
