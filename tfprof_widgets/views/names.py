"""Readable names for tables, legends and pies: short C++ kernel names, short op paths, and
labels that stay distinct.

A GPU kernel's demangled name is often 400-900 characters of Eigen templates, most of it the
same for every kernel (``TensorEvaluator<TensorAssignOp<TensorMap<Tensor<...>>>>``). What tells
kernels apart is the template's head and the expression it computes, so
:func:`short_kernel_name` keeps those: ``EigenMetaKernel<TensorConversionOp<half ← float>>``.
The full name stays in the data (hover, CSV); a pie needs labels that are distinct as well as
short, or plotly merges slices with the same label (:func:`unique_labels`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["short_kernel_name", "short_op_name", "unique_labels"]

MAX_KERNEL_CHARS = 72
# Kernel templates that only launch the one type they wrap (CUTLASS's, cuDNN's copy of it).
_WRAPPERS = frozenset({"Kernel", "Kernel2", "device_kernel"})
_RETURN_TYPE = re.compile(r"^\s*(?:std::)?enable_if<.*?>::type\s+")


@dataclass
class _Node:
    name: str
    args: list[_Node] = field(default_factory=list)
    templated: bool = False


def _split_top(s: str, sep: str) -> list[str]:
    """Split on ``sep`` outside <>, () and []."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


def _strip_trailing_qualifiers(s: str) -> str:
    """``s`` without trailing ``const``, ``volatile``, ``*`` and ``&``, in time linear in its
    length (the regex ``(\\s*(const|volatile)\\b|\\s*[*&])+$`` it replaces backtracked over
    every run of spaces: quadratic in a hostile name's spaces, docs/speed.md)."""
    end = len(s)
    while True:
        while end and s[end - 1].isspace():
            end -= 1
        if end and s[end - 1] in "*&":
            end -= 1
        elif s.endswith("const", 0, end):
            end -= 5
        elif s.endswith("volatile", 0, end):
            end -= 8
        else:
            return s[:end]


# Template arguments nested deeper than this are not parsed: a name is shown to depth 6 at
# most, and each level scans its text again (a name of 30,000 nested ``<`` took seconds).
_MAX_PARSE_DEPTH = 32


def _parse(s: str, level: int = 0) -> _Node:
    s = _strip_trailing_qualifiers(s.strip())
    if level > _MAX_PARSE_DEPTH:
        return _Node(s[:MAX_KERNEL_CHARS])
    s = re.sub(r"^(const|struct|class|enum|typename)\s+", "", s)
    depth, open_at = 0, -1
    for i, ch in enumerate(s):
        if ch == "<":
            if depth == 0 and open_at < 0:
                open_at = i
            depth += 1
        elif ch == ">":
            depth -= 1
    if open_at < 0 or not s.endswith(">"):
        # A template's nested name (``Foo<int>::type``) or no template at all: keep the tail.
        return _Node(_unqualify(s))
    head = _unqualify(s[:open_at])
    inner = s[open_at + 1 : -1]
    args = [_parse(a, level + 1) for a in _split_top(inner, ",") if a.strip()]
    return _Node(head, args, True)


def _unqualify(name: str) -> str:
    parts = _split_top(name.strip(), ":")
    parts = [p for p in parts if p]
    return parts[-1].strip() if parts else name.strip()


_NOISE = re.compile(
    r"^(-?\d+[ul]*|true|false|GpuDevice|ThreadPoolDevice|DefaultDevice|MakePointer)$"
)
_INDEX = {"int", "long", "long long", "unsigned int", "unsigned long", "int64_t", "int32_t"}


def _simplify(n: _Node, verbose: bool) -> _Node:
    """The part of an Eigen/TF template that says what a kernel computes."""
    a = n.args
    if n.name in ("TensorMap", "TensorEvaluator") and a:
        return _simplify(a[0], verbose)
    if n.name == "Tensor" and a:
        return _Node(a[0].name) if not a[0].templated else _simplify(a[0], verbose)
    if n.name == "TensorAssignOp" and len(a) == 2 and not verbose:
        return _simplify(a[1], verbose)
    if n.name == "TensorConversionOp" and len(a) == 2:
        to, frm = _simplify(a[0], verbose), _simplify(a[1], verbose)
        return _Node(f"TensorConversionOp<{_render(to, 1, verbose)} ← {_render(frm, 1, verbose)}>")
    if n.name in ("scalar_left", "scalar_right") and len(a) >= 3 and not verbose:
        # A binary functor with one operand a constant: say on which side the constant is.
        op = _render(_simplify(a[2], verbose), 1, verbose)
        return _Node(f"{op}(c, x)" if n.name == "scalar_left" else f"{op}(x, c)")
    if n.name == "TensorBroadcastingOp" and len(a) == 2 and not verbose:
        rank = [x.name for x in a[0].args if re.match(r"^\d+[ul]*$", x.name)]
        what = _render(_simplify(a[1], verbose), 1, verbose)
        suffix = f", rank {rank[0].rstrip('ul')}" if rank else ""
        return _Node(f"TensorBroadcastingOp<{what}{suffix}>")
    if n.name in ("TensorCwiseUnaryOp", "TensorCwiseBinaryOp", "TensorReductionOp") and a:
        if not verbose:
            a = a[:1]  # the functor; the operands are tensor maps
    args = [_simplify(x, verbose) for x in a]
    if not verbose:
        kept = [x for x in args if not _NOISE.match(x.name)]
        # An index type is noise next to the expression, but alone it is the data type.
        args = [x for x in kept if x.name not in _INDEX] or kept
    # Repeated identical arguments (scalar_product_op<half, half>) say nothing more.
    seen, uniq = set(), []
    for x in args:
        key = _render(x, 9, verbose)
        if key not in seen:
            seen.add(key)
            uniq.append(x)
    return _Node(n.name, uniq, n.templated and bool(uniq))


def _render(n: _Node, depth: int, verbose: bool = False) -> str:
    if not n.args:
        return n.name
    if depth <= 0:
        return f"{n.name}<…>"
    return f"{n.name}<{', '.join(_render(x, depth - 1, verbose) for x in n.args)}>"


def _function_name(full: str) -> str:
    """``void ns::Kern<T>(args)`` → ``ns::Kern<T>`` (return type and parameters dropped)."""
    s = full.strip()
    depth = 0
    for i, ch in enumerate(s):
        if ch in "<[":
            depth += 1
        elif ch in ">]":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            s = s[:i]
            break
    words = _split_top(s, " ")
    words = [w for w in words if w]
    return words[-1] if words else s


def short_kernel_name(full: str, max_chars: int = MAX_KERNEL_CHARS, verbose: bool = False) -> str:
    """A GPU kernel's name the way a reader needs it: the template's head and what it computes.

    ``void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<...,
    Eigen::TensorConversionOp<Eigen::half, ...<float const...>>>>, long>(...)`` becomes
    ``EigenMetaKernel<TensorConversionOp<half ← float>>``. Namespaces, ``const``, parameter
    lists, devices, index types and alignment numbers are dropped (``verbose`` keeps the last
    three and the assignment's target); names without templates only lose their namespaces and
    parameters. Never longer than ``max_chars`` (the deepest arguments become ``…``).
    """
    if not full:
        return ""
    # "(anonymous namespace)::" reads as a parameter list, and a SFINAE return type
    # ("std::enable_if<(8 > 0)...>::type") as the kernel: ATen's and vLLM's kernels were
    # named "native", "void" or "enable_if<(((8)>" (issue 36 item 18).
    full = _RETURN_TYPE.sub("", full.replace("(anonymous namespace)::", ""))
    try:
        node = _simplify(_parse(_function_name(full)), verbose)
    except (RecursionError, IndexError):
        node = _Node(_unqualify(_function_name(full)))
    while node.name in _WRAPPERS and len(node.args) == 1 and node.args[0].name:
        node = node.args[0]  # cutlass::Kernel2<cutlass_80_..._gemm>: the GEMM is the name
    for depth in range(6, -1, -1):
        out = _render(node, depth, verbose)
        if len(out) <= max_chars:
            return out
    return out[: max_chars - 1] + "…"


def short_op_name(full: str, max_chars: int = 40) -> str:
    """A TF op path no longer than ``max_chars``: its first scope and as many of its last parts
    as fit (``bert/…/attention/self/MatMul``)."""
    if len(full) <= max_chars:
        return full
    parts = full.split("/")
    if len(parts) < 2:
        return full[: max_chars - 1] + "…"
    tail: list[str] = []
    for p in reversed(parts[1:]):
        cand = "/".join([parts[0], "…", p, *tail])
        if len(cand) > max_chars and tail:
            break
        tail.insert(0, p)
    out = "/".join([parts[0], "…", *tail]) if len(tail) < len(parts) - 1 else full
    if len(out) > max_chars:  # one very long last part
        out = "…" + full[-(max_chars - 1) :]
    return out


def unique_labels(
    fulls: Sequence[str],
    shorten: Callable[..., str],
    fallbacks: Sequence[dict] = (),
) -> list[str]:
    """Short labels for distinct full names that stay distinct: names whose short forms
    collide are shortened again with each of ``fallbacks`` (keyword arguments for ``shorten``,
    e.g. ``{"verbose": True}``), and any that still collide get `` #2``, `` #3``..."""
    labels = [shorten(f) for f in fulls]
    for extra in fallbacks:
        clash = _clashes(labels, fulls)
        if not clash:
            break
        for i in clash:
            labels[i] = shorten(fulls[i], **extra)
    clash = _clashes(labels, fulls)
    if clash:
        counts: dict[str, int] = {}
        for i, lab in enumerate(list(labels)):
            if i in clash:
                counts[lab] = counts.get(lab, 0) + 1
                if counts[lab] > 1:
                    labels[i] = f"{lab} #{counts[lab]}"
    return labels


def _clashes(labels: Sequence[str], fulls: Sequence[str]) -> set[int]:
    by_label: dict[str, set[str]] = {}
    for lab, full in zip(labels, fulls):
        by_label.setdefault(lab, set()).add(full)
    return {i for i, lab in enumerate(labels) if len(by_label[lab]) > 1}
