"""Make real TF1-style profiles with tensorflow-cpu and record TensorFlow's own answers.

    python tests/support/tf1_reference.py OUTDIR

Builds a small graph-mode model (conv, dense, softmax loss, SGD), runs two training steps
with RunOptions(trace_level=FULL_TRACE), feeds both to a tf.compat.v1.profiler.Profiler, and
writes:
  OUTDIR/model.tfprof               Profiler.serialize_to_string()
  OUTDIR/steps/step_<n>.run_metadata.pb   each step's RunMetadata
  OUTDIR/reference.json             what tf.compat.v1.profiler reports on the same data:
      total FLOPs (float_operation), trainable parameters in total and per scope
      (trainable_variables_parameter), and the op view's exec time and memory per op type
      for step -1 (the average) and step 0, and the scope, graph and code views' rows
      (name, depth, exec and requested bytes, own and total) ordered by name.

    python tests/support/tf1_reference.py OUTDIR pool

makes the same files for a second model (conv, max pool, dense; three steps) and records
tfprof's op view exactly as ``ProfileOptionBuilder.time_and_memory()`` shows it (its
defaults: min_micros=1, min_bytes=1, order by micros, account_displayed_op_only): every
shown row in display order with its own and cumulative time and requested bytes
(``op_chain``), and the same with account_displayed_op_only=False (``op_chain_all``).
Runs in its own process: graph mode (disable_eager_execution) is process-wide.

    python tests/support/tf1_reference.py --chains PROFILE

prints, as JSON, tfprof's op view of a saved profile (its own ProfilerFromFile, as the
tfprof command line's --profile_path reads one) with time_and_memory()'s options, with
account_displayed_op_only as the preset sets it (True) and with it False.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1


def build(pool: bool = False):
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(0)
        x = v1.placeholder(tf.float32, (32, 28, 28, 1), name="x")
        y = v1.placeholder(tf.int32, (32,), name="y")
        with v1.variable_scope("conv1"):
            w = v1.get_variable("w", (3, 3, 1, 8))
            b = v1.get_variable("b", (8,), initializer=v1.zeros_initializer())
            h = tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME") + b)
        side = 28
        if pool:
            with v1.variable_scope("pool"):
                h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            side = 14
        with v1.variable_scope("dense"):
            w2 = v1.get_variable("w", (side * side * 8, 10))
            b2 = v1.get_variable("b", (10,), initializer=v1.zeros_initializer())
            logits = tf.matmul(tf.reshape(h, (32, -1)), w2) + b2
        step = v1.get_variable(
            "global_step", (), tf.int64, trainable=False, initializer=v1.zeros_initializer()
        )
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
        init = v1.global_variables_initializer()
    return g, x, y, train, init


def op_view(prof, step: int) -> dict:
    opts = v1.profiler.ProfileOptionBuilder
    o = (
        opts(opts.time_and_memory(min_micros=0, min_bytes=0))
        .with_step(step)
        .with_empty_output()
        .build()
    )
    rows, todo = {}, list(prof.profile_operations(o).children)
    while todo:  # the op view nests each row under the previous one
        c = todo.pop()
        rows[c.name] = {
            "exec_micros": c.exec_micros,
            "requested_bytes": c.requested_bytes,
            "peak_bytes": c.peak_bytes,
            "output_bytes": c.output_bytes,
            "residual_bytes": c.residual_bytes,
            "float_ops": c.float_ops,
            "nodes": len(c.graph_nodes),
        }
        todo.extend(c.children)
    return rows


def op_chain(prof, displayed_only: bool = True) -> list:
    """tfprof's op view with time_and_memory() as it is: [name, exec, total exec, requested
    bytes, total requested bytes, nodes] per shown row, in display order."""
    opts = v1.profiler.ProfileOptionBuilder
    o = opts(opts.time_and_memory()).with_empty_output().build()
    o["account_displayed_op_only"] = displayed_only
    return chain_rows(prof.profile_operations(o))


def chain_rows(node) -> list:
    rows = []
    while node.children:  # each row is the only child of the one before
        node = node.children[0]
        rows.append(
            [
                node.name,
                node.exec_micros,
                node.total_exec_micros,
                node.requested_bytes,
                node.total_requested_bytes,
                len(node.graph_nodes),
            ]
        )
    return rows


def tree_view(prof, cmd: str) -> list:
    """(name, depth, exec, total exec, requested, total requested) rows of a tree view."""
    opts = v1.profiler.ProfileOptionBuilder
    o = (
        opts(opts.time_and_memory(min_micros=0, min_bytes=0))
        .order_by("name")
        .with_max_depth(1000)
        .with_empty_output()
        .build()
    )
    root = {
        "scope": prof.profile_name_scope,
        "graph": prof.profile_graph,
        "code": prof.profile_python,
    }[cmd](o)
    rows, todo = [], [(c, 0) for c in reversed(root.children)]
    while todo:
        n, depth = todo.pop()
        rows.append(
            [
                n.name,
                depth,
                n.exec_micros,
                n.total_exec_micros,
                n.requested_bytes,
                n.total_requested_bytes,
            ]
        )
        todo.extend((c, depth + 1) for c in reversed(n.children))
    return rows


def chains_from_file(path: str) -> dict:
    """tfprof's op view of a saved profile (time_and_memory(), account_displayed_op_only
    True and False), computed by tfprof itself from the file."""
    from tensorflow.core.profiler import tfprof_output_pb2
    from tensorflow.python.profiler import model_analyzer
    from tensorflow.python.util import _pywrap_tfprof as tfprof

    opts = v1.profiler.ProfileOptionBuilder
    out = {}
    tfprof.ProfilerFromFile(path.encode())
    try:
        for displayed_only in (True, False):
            o = opts(opts.time_and_memory()).with_empty_output().build()
            o["account_displayed_op_only"] = displayed_only
            root = tfprof_output_pb2.MultiGraphNodeProto()
            root.ParseFromString(
                tfprof.Profile(b"op", model_analyzer._build_options(o).SerializeToString())
            )
            out[f"account_displayed_op_only={displayed_only}"] = chain_rows(root)
    finally:
        tfprof.DeleteProfiler()
    return out


def main() -> None:
    if sys.argv[1] == "--chains":
        print(json.dumps(chains_from_file(sys.argv[2])))
        return
    v1.disable_eager_execution()
    out = sys.argv[1]
    pool = sys.argv[2:] == ["pool"]
    os.makedirs(os.path.join(out, "steps"), exist_ok=True)
    g, x, y, train, init = build(pool)
    rng = np.random.default_rng(0)
    feed = {x: rng.random((32, 28, 28, 1), dtype=np.float32), y: rng.integers(0, 10, 32)}
    opts = v1.profiler.ProfileOptionBuilder
    with v1.Session(graph=g) as sess:
        sess.run(init)
        prof = v1.profiler.Profiler(g)
        for s in range(3 if pool else 2):
            rm = v1.RunMetadata()
            sess.run(
                train,
                feed,
                options=v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE),
                run_metadata=rm,
            )
            prof.add_step(s, rm)
            with open(os.path.join(out, "steps", f"step_{s}.run_metadata.pb"), "wb") as f:
                f.write(rm.SerializeToString())
        with open(os.path.join(out, "model.tfprof"), "wb") as f:
            f.write(prof.serialize_to_string())
        if pool:
            with open(os.path.join(out, "reference.json"), "w") as f:
                chains = {"op_chain": op_chain(prof), "op_chain_all": op_chain(prof, False)}
                json.dump(chains, f, indent=1)
            return
        quiet = {"output": "none"}
        flops = v1.profiler.profile(
            g, run_meta=rm, cmd="scope", options={**opts.float_operation(), **quiet}
        )
        params = v1.profiler.profile(
            g, cmd="scope", options={**opts.trainable_variables_parameter(), **quiet}
        )
        ref = {
            "total_float_ops": flops.total_float_ops,
            "total_parameters": params.total_parameters,
            "scope_parameters": {c.name: c.total_parameters for c in params.children},
            "op_view_avg": op_view(prof, -1),
            "op_view_step0": op_view(prof, 0),
            **{f"{cmd}_view": tree_view(prof, cmd) for cmd in ("scope", "graph", "code")},
        }
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
