"""A training program that serves TF's profiler on a port, for remote-capture tests.

    python profiled_program.py PORT SECONDS

Prints "serving" once the server is up, then runs marked training steps until SECONDS pass.
"""

import sys
import time

import tensorflow as tf


def main() -> None:
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    tf.profiler.experimental.server.start(port)
    w = tf.Variable(tf.random.normal((64, 64)))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
        w.assign_sub(1e-6 * tape.gradient(loss, w))
        return loss

    x = tf.random.normal((32, 64))
    step(x)
    print("serving", flush=True)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
            step(x)
        n += 1
        time.sleep(0.005)


if __name__ == "__main__":
    main()
