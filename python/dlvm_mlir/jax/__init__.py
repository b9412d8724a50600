"""The JAX front end: run a JAX function through DLVM.

    import jax, jax.numpy as jnp
    import dlvm_mlir.jax

    def loss(params, x, labels):
        logits = jnp.tanh(x @ params["w1"]) @ params["w2"]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    f = dlvm_mlir.jax.jit(loss)
    value = f(params, x, labels)                 # DLVM's compiled forward
    grads = jax.grad(f)(params, x, labels)       # DLVM's AD (dl.gradient), through jax.custom_vjp

The function's jaxpr (``jax.make_jaxpr``: JAX's IR, primitives by name) is
imported onto NNKit (:mod:`dlvm_mlir.jax.importer`), staged as an NNKit function
of one positional parameter per flattened input, specialized per input shapes
and dtypes, and compiled by DLVM. ``jax.grad`` (and ``jax.vjp``) of the result
run ``dl.gradient(staged, wrt=<float inputs>, seedable=True)`` with the
cotangents as seeds. Calls go through ``jax.pure_callback``, so the function
also works under ``jax.jit`` and with other tracers. A primitive the importer
does not cover is a :class:`dlvm_mlir.errors.FrontendError` naming it and the
user's line; :func:`coverage` lists those it does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax._src import core

import dlvm_mlir.nnkit as dl

from . import importer
from .importer import PRIMITIVES, JaxFrontendError

__all__ = ["JaxFrontendError", "PRIMITIVES", "coverage", "jit"]


def coverage() -> dict[str, list[str]]:
    """The JAX primitives ``dlvm_mlir.jax`` imports, by family (sorted names)."""
    table: dict[str, list[str]] = {}
    for name, family in importer.FAMILIES.items():
        table.setdefault(family, []).append(name)
    return {family: sorted(names) for family, names in sorted(table.items())}


def _is_float(dtype: Any) -> bool:
    return np.issubdtype(np.dtype(dtype), np.floating) or np.dtype(dtype).name == "bfloat16"


class _Program:
    """One specialization of a jitted function: input tree and avals, the jaxpr, the
    staged NNKit function and (made at first use) its gradient."""

    def __init__(self, fn: Callable[..., Any], in_tree: Any, avals: list[Any], name: str, options: dict) -> None:
        def flat_fn(*leaves: Any) -> Any:
            args, kwargs = jax.tree_util.tree_unflatten(in_tree, list(leaves))
            return fn(*args, **kwargs)

        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
        closed, out_shape = jax.make_jaxpr(flat_fn, return_shape=True)(*specs)
        out_leaves, self.out_tree = jax.tree_util.tree_flatten(out_shape)
        self.closed = closed
        self.name = name
        self.options = options
        self.in_avals = [v.aval for v in closed.jaxpr.invars]
        self.out_avals = [v.aval for v in closed.jaxpr.outvars]
        for position, aval in enumerate(self.in_avals + self.out_avals):
            what = f"input {position} " if position < len(self.in_avals) else "an output "
            if aval.dtype.name == "bfloat16":
                raise JaxFrontendError(f"{what}of '{name}' is bfloat16, which cannot cross into DLVM; "
                                       "cast it to float32 outside")
            importer.dtype(aval.dtype, what)
        self.out_structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in self.out_avals]
        self.staged = importer.stage(closed, name, **options)
        self.specs = [dl.spec(a.shape, importer.dtype(a.dtype)) for a in self.in_avals]
        self.staged.specialize(*self.specs)  # import now: errors at the user's call, not in a callback
        self.float_in = [i for i, a in enumerate(self.in_avals) if _is_float(a.dtype)]
        self.float_out = [i for i, a in enumerate(self.out_avals) if _is_float(a.dtype)]
        # one float rank-0 output (a loss): the forward under differentiation runs the gradient
        # with seed 1 keeping every output (one compiled program, its forward shared), and the
        # backward scales those gradients by the cotangent
        self.loss = (len(self.float_out) == 1 and not self.out_avals[self.float_out[0]].shape
                     and bool(self.float_in))
        self._gradient: dl.Gradient | None = None
        self._value_and_gradient: dl.Gradient | None = None
        self.call = self._custom_vjp()

    # -- running DLVM (on numpy arrays) ----------------------------------------------

    def _inputs(self, arrays: tuple) -> list[np.ndarray]:
        return [np.asarray(a, dtype=aval.dtype) for a, aval in zip(arrays, self.in_avals)]

    def run(self, *arrays: Any) -> tuple[np.ndarray, ...]:
        """The forward on concrete arrays (numpy results of the jaxpr's out avals)."""
        out = self.staged(*self._inputs(arrays))
        return tuple(np.asarray(o, dtype=s.dtype).reshape(s.shape) for o, s in zip(out, self.out_structs))

    def gradient(self) -> dl.Gradient:
        if self._gradient is None:
            primal = self.staged
            if len(self.float_out) != len(self.out_avals):  # integer outputs take no seed
                primal = importer.stage(self.closed, self.name, self.float_out, **self.options)
            self._gradient = dl.gradient(primal, wrt=self.float_in, seedable=True)
        return self._gradient

    def value_and_gradient(self) -> dl.Gradient:
        if self._value_and_gradient is None:
            outputs = len(self.out_avals)
            self._value_and_gradient = dl.gradient(
                self.staged, wrt=self.float_in, keeping=range(outputs),
                from_=self.float_out[0] if outputs > 1 else None,
            )
        return self._value_and_gradient

    def run_value_and_gradient(self, *arrays: Any) -> tuple[np.ndarray, ...]:
        """The outputs, then the gradients of the loss output wrt the float inputs."""
        out = self.value_and_gradient()(*self._inputs(arrays))
        out = out if isinstance(out, tuple) else (out,)
        grads, outs = out[: len(self.float_in)], out[len(self.float_in):]
        return (
            *(np.asarray(o, dtype=s.dtype).reshape(s.shape) for o, s in zip(outs, self.out_structs)),
            *(np.asarray(g, dtype=self.in_avals[i].dtype).reshape(self.in_avals[i].shape)
              for g, i in zip(grads, self.float_in)),
        )

    def run_backward(self, *arrays: Any) -> tuple[np.ndarray, ...]:
        """Gradients wrt the float inputs; ``arrays`` are the inputs, then the cotangents of the float outputs."""
        n = len(self.in_avals)
        inputs = self._inputs(arrays[:n])
        seeds = [np.asarray(c, dtype=self.out_avals[i].dtype) for c, i in zip(arrays[n:], self.float_out)]
        out = self.gradient()(*inputs, *seeds)
        out = out if isinstance(out, tuple) else (out,)
        return tuple(np.asarray(g, dtype=self.in_avals[i].dtype).reshape(self.in_avals[i].shape)
                     for g, i in zip(out, self.float_in))

    def prepare(self, which: str) -> None:
        """Compile a program before JAX runs it in a callback, where a DLVMError would come
        out as a JaxRuntimeError with a traceback."""
        if which == "forward":
            self.staged.specialize(*self.specs).executable
        elif which == "loss":
            self.value_and_gradient().specialize(*self.specs).executable
        else:
            seeds = [dl.spec(self.out_avals[i].shape, importer.dtype(self.out_avals[i].dtype)) for i in self.float_out]
            self.gradient().specialize(*self.specs, *seeds).executable

    # -- the JAX side ------------------------------------------------------------------

    def _custom_vjp(self) -> Callable[..., Any]:
        @jax.custom_vjp
        def call(*leaves: Any) -> tuple:
            self.prepare("forward")
            return jax.pure_callback(self.run, tuple(self.out_structs), *leaves, vmap_method="sequential")

        grad_structs = tuple(jax.ShapeDtypeStruct(self.in_avals[i].shape, self.in_avals[i].dtype)
                             for i in self.float_in)

        def forward(*leaves: Any) -> tuple:
            if not self.loss:
                return call(*leaves), leaves
            self.prepare("loss")
            found = jax.pure_callback(self.run_value_and_gradient, tuple(self.out_structs) + grad_structs,
                                      *leaves, vmap_method="sequential")
            return tuple(found[: len(self.out_structs)]), tuple(found[len(self.out_structs):])

        def backward(residuals: tuple, cotangents: tuple) -> tuple:
            grads: list[Any] = [None] * len(self.in_avals)
            if self.loss:  # the gradients of seed 1, scaled
                seed = cotangents[self.float_out[0]]
                for i, g in zip(self.float_in, residuals):
                    grads[i] = g * seed.astype(g.dtype)
                return tuple(grads)
            leaves = residuals
            if not self.float_in or not self.float_out:
                for i in self.float_in:
                    grads[i] = jax.numpy.zeros(self.in_avals[i].shape, self.in_avals[i].dtype)
                return tuple(grads)
            self.prepare("backward")
            seeds = [cotangents[i] for i in self.float_out]
            found = jax.pure_callback(self.run_backward, grad_structs, *leaves, *seeds, vmap_method="sequential")
            for i, g in zip(self.float_in, found):
                grads[i] = g
            return tuple(grads)

        call.defvjp(forward, backward)
        return call


class Jitted:
    """A JAX function run through DLVM: call it as the function (pytrees of arrays in and out)."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None, **options: Any) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "jax_fn")
        self.options = options
        self._programs: dict[Any, _Program] = {}
        functools.update_wrapper(self, fn)

    def program(self, *args: Any, **kwargs: Any) -> _Program:
        """The specialization for these arguments (imported and staged at first use)."""
        leaves, in_tree = jax.tree_util.tree_flatten((args, kwargs))
        avals = [jax.typeof(leaf) for leaf in leaves]
        key = (in_tree, tuple((tuple(a.shape), str(a.dtype), a.weak_type) for a in avals))
        found = self._programs.get(key)
        if found is None:
            found = _Program(self.fn, in_tree, avals, self.name, self.options)
            self._programs[key] = found
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        program = self.program(*args, **kwargs)
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(leaf, core.Tracer) for leaf in leaves):
            out = program.call(*leaves)
        else:  # concrete arrays: no callback needed
            out = tuple(jax.numpy.asarray(o) for o in program.run(*leaves))
        return jax.tree_util.tree_unflatten(program.out_tree, list(out))

    def ir(self, *args: Any, stage: str = "dlvm", **kwargs: Any) -> str:
        """The DLVM IR of the specialization for these arguments (``stage``: dlvm, ad, optimize, linalg)."""
        program = self.program(*args, **kwargs)
        specs = [dl.spec(a.shape, importer.dtype(a.dtype)) for a in program.in_avals]
        return program.staged.ir(*specs, stage=stage)


def jit(fn: Callable[..., Any] | None = None, /, *, name: str | None = None, **options: Any) -> Any:
    """Run the JAX function ``fn`` through DLVM (``jax.grad`` of it by DLVM's AD).

    ``options`` (``target``, ``optimize``, ``checkpoint``, ...) are ``dl.function``'s.
    Usable as ``@dlvm_mlir.jax.jit`` or ``@dlvm_mlir.jax.jit(target="cuda")``.
    """
    if fn is None:
        return lambda f: Jitted(f, name, **options)
    return Jitted(fn, name, **options)
