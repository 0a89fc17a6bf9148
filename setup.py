"""Build configuration beyond pyproject.toml: the optional C extensions.

``_wire`` walks .xplane.pb files (about 10x faster than protobuf); ``_chrome`` decodes Chrome
trace JSON straight into columns; ``analysis/_tf_ops`` parses op names (XProf's
ParseTfOpFullname) by the thousand. All are optional: where no C compiler is available the
build goes on without them and the pure-Python code is used.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tfprof_widgets.readers.xspace._wire",
            sources=["tfprof_widgets/readers/xspace/_wire.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(
            "tfprof_widgets.readers.chrome._chrome",
            sources=["tfprof_widgets/readers/chrome/_chrome.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(
            "tfprof_widgets.frameworks.tensorflow._tf_ops",
            sources=["tfprof_widgets/frameworks/tensorflow/_tf_ops.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
    ]
)
