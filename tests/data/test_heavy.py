"""The heavy libraries (torch, JAX, PySpark): run when installed (``pytest -m heavy``), skipped otherwise."""

from __future__ import annotations

import pytest

from pyaichat.capabilities.summary import describe, one_line, type_details

pytestmark = pytest.mark.heavy


def test_a_torch_tensor_shows_shape_dtype_device_and_grad_and_values_only_on_the_cpu():
    torch = pytest.importorskip("torch")
    t = torch.arange(12.0).reshape(3, 4).requires_grad_()
    y = t * 2
    assert one_line(t) == "torch Tensor 3×4 torch.float32 on cpu, requires grad (leaf)"
    assert "requires grad (from MulBackward0)" in one_line(y)
    text = describe(y)
    assert "[[ 0.  2.  4.  6.]" in text and "layout: torch.strided" in text
    assert "values" not in describe(y, "schema")
    assert t.grad is None and y.grad_fn is not None  # looking recorded no gradient
    meta = torch.empty(1000, 1000, device="meta")
    assert "values: not shown" in describe(meta)
    half = torch.zeros(4, dtype=torch.bfloat16)
    assert "no zero-copy view" in describe(half)
    assert "shape: (3, 4)" in "\n".join(type_details(t, "sample"))


def test_a_jax_array_shows_its_devices():
    jnp = pytest.importorskip("jax.numpy")
    a = jnp.arange(6.0).reshape(2, 3)
    assert one_line(a).startswith("jax Array 2×3 float32 on ")
    assert "[[0. 1. 2.]" in describe(a)


def test_a_spark_frame_is_never_counted():
    pyspark = pytest.importorskip("pyspark.sql")
    spark = pyspark.SparkSession.builder.master("local[1]").appName("pyaichat-test").getOrCreate()
    try:
        df = spark.createDataFrame([(1, "a"), (2, "b")], ["id", "name"])
        assert one_line(df) == "Spark DataFrame ?×2 (lazy: not computed, not cached): id bigint, name string"
        assert "count() would run a Spark job" in describe(df)
    finally:
        spark.stop()
        _stop_jvm()


def _stop_jvm() -> None:
    """``stop()`` leaves the JVM running as a child of this process until it exits: end and reap it."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return
    gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        proc.terminate()
        proc.wait(10)
    SparkContext._gateway = None
    SparkContext._jvm = None
