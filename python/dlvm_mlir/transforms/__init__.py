"""DLVM's transformations, one module per pass (``dlvm-x-y`` lives in ``x_y.py``).

Every module here is imported when the pass registry is first read, so a pass
registers itself with ``@register_pass`` at import. Rewrite rules shared by
several passes live in :mod:`dlvm_mlir.transforms._patterns`; the public API
for rule sets is :mod:`dlvm_mlir.rewrites`.
"""
