"""The built-in adapters: which module's types each describes, and where it is (imported on first use). Plain
data: the registry declares them on its first look-up.

A library whose types live in more than one top-level module is declared once for each (``jaxlib`` beside
``jax``, the ``_duckdb`` extension beside ``duckdb``); a sub-module narrows an entry (``scipy`` describes
only sparse matrices, but any ``scipy`` type is asked).
"""

from __future__ import annotations

_HERE = __name__.rpartition(".")[0]

BUILTIN = {
    # module of the value's type → adapter class, in a module of this package
    "pandas": "pandas:PandasAdapter",
    "numpy": "numpy:NumpyAdapter",
    "polars": "polars:PolarsAdapter",
    "pyarrow": "pyarrow:ArrowAdapter",
    "xarray": "xarray:XarrayAdapter",
    "dask": "dask:DaskAdapter",
    "pyspark": "pyspark:SparkAdapter",
    "torch": "torch:TorchAdapter",
    "jax": "jax:JaxAdapter",
    "jaxlib": "jax:JaxAdapter",
    "scipy": "scipy:SparseAdapter",
    "ibis": "ibis:IbisAdapter",
    "sqlite3": "sqlite:SqliteAdapter",
    "_sqlite3": "sqlite:SqliteAdapter",
    "duckdb": "duckdb:DuckDBAdapter",
    "_duckdb": "duckdb:DuckDBAdapter",
    "sqlalchemy": "sqlalchemy:SQLAlchemyAdapter",
    "psycopg": "psycopg:PsycopgAdapter",
    "matplotlib": "matplotlib:MatplotlibAdapter",
}


def targets() -> dict[str, str]:
    """Each module of the value's types → its adapter's import path (``package.module:Class``)."""
    return {module: f"{_HERE}.{target}" for module, target in BUILTIN.items()}
