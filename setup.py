"""Build configuration beyond pyproject.toml: the optional C extensions.

``_wire`` walks .xplane.pb files (about 10x faster than protobuf); ``_chrome`` decodes Chrome
trace JSON straight into columns. Both are optional: where no C compiler is available the
build goes on without them and the pure-Python readers are used.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tfprof_widgets.readers._wire",
            sources=["tfprof_widgets/readers/_wire.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(
            "tfprof_widgets.readers._chrome",
            sources=["tfprof_widgets/readers/_chrome.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
    ]
)
