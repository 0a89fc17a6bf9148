"""TensorFlow's rules (:mod:`.rules`), its op names (:mod:`.op_names`, with the C parser
``_tf_ops``), and the analyses only TF captures have: tf.data bottlenecks (:mod:`.tf_data`)
and TF1's tfprof tables and advisor (:mod:`.tfprof_tables`, :mod:`.tfprof_advice`).
"""

from ...analysis.results import Analysis
from .rules import TensorFlow

_HERE = "tfprof_widgets.frameworks.tensorflow."
# The analyses only TF captures have, as run attributes (see tfprof_widgets.analysis.ANALYSES).
ANALYSES = (
    Analysis("tf_data", _HERE + "tf_data:tf_data", "TfDataSummary"),
    Analysis("tf_data_bottleneck", _HERE + "tf_data:tf_data_bottleneck", "TF_DATA_BOTTLENECK"),
    Analysis("tfprof_advice", _HERE + "tfprof_advice:tfprof_advice", "TFPROF_ADVICE"),
    Analysis("total_float_ops", _HERE + "tfprof_tables:total_float_ops", "int"),
    Analysis("total_parameters", _HERE + "tfprof_tables:total_parameters", "int"),
)

__all__ = ["ANALYSES", "TensorFlow"]
