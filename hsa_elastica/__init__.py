"""hsa-elastica: Handed Shearing Auxetic rods and robots as a PyElastica 1.0 plugin.

The public API is listed in ``__all__``; see ``docs/architecture.md`` for the module map.
"""

__version__ = "0.1.0"

__all__: list[str] = ["__version__"]
