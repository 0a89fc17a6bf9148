"""Build configuration beyond pyproject.toml: the optional C wire walker.

The extension makes loading .xplane.pb files about 10x faster. It is optional: where no C
compiler is available the build goes on without it and the pure-Python reader is used.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tfprof_widgets.readers._wire",
            sources=["tfprof_widgets/readers/_wire.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
