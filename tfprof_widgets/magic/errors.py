"""A :class:`~tfprof_widgets.ProfileError` in a notebook as the one line it is.

Every ProfileError says what is wrong with which file in its message (``errors.py``); the
30 lines of loader frames IPython prints above it only push that line off the screen. In a
notebook's kernel (at import, and with ``%load_ext tfprof_widgets``) IPython's
custom-exception hook shows a ProfileError as its one line (and IPython's hint); ``%tb`` still
prints the whole traceback (IPython keeps it as ``sys.last_traceback``), and every other
exception is shown as before.
"""

from __future__ import annotations

from ..errors import ProfileError


def show_one_line(shell, etype, value, tb, tb_offset=None):
    """IPython's custom-exception handler (``shell.set_custom_exc``): the exception's one
    line (``ProfileNotFoundError: PATH: no such file or directory``) under IPython's own
    "use %tb to see the full traceback"; the traceback is kept for ``%tb`` and debuggers."""
    # showtraceback stores sys.last_type/value/traceback (what %tb and %debug read).
    shell.showtraceback((etype, value, tb), exception_only=True)
    return [f"{etype.__name__}: {value}"]


def install(shell) -> bool:
    """Show ProfileErrors as one line in ``shell``; False (and nothing changed) where
    another package's custom-exception handler is set (IPython keeps only one)."""
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    current = tuple(getattr(shell, "custom_exceptions", ()) or ())
    if current and current != (ProfileError,):
        return False
    shell.set_custom_exc((ProfileError,), show_one_line)
    return True


def install_in_kernel() -> bool:
    """:func:`install` in this process's notebook kernel, if it is one."""
    from .._kernel import in_kernel

    if not in_kernel():
        return False
    from IPython import get_ipython

    return install(get_ipython())
