"""physics"""

from hsa_elastica.kernel_cache import ensure_fresh_cache

ensure_fresh_cache()  # before any kernel module of the package is imported
