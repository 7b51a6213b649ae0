"""How far is the robot model from passive?  Linearised, undamped flutter at static poses.

At a static equilibrium of a conservative model the stiffness matrix ``K = -dF/dx`` (forces
and couples of every free node, element and platform, with respect to positions and local
rotations) is symmetric; its antisymmetric part is the *circulatory* stiffness, which can
pump energy into a pair of modes (flutter).  For each case this script solves the static pose
(:func:`hsa_elastica.robots.statics_api.solve_static`), takes the static solver's finite-difference Jacobian
``J = dF/dx`` there and prints

* ``asym``: ``|J - J^T| / |J + J^T|`` (Frobenius), 0 for a conservative model, and the same
  for the node-node, node-element and element-element blocks;
* ``growth``: the largest real part [1/s] of ``sqrt(lambda)`` over the eigenvalues
  ``lambda`` of ``M^-1 J`` (``M`` the node masses and element inertias): the growth rate of
  the fastest-growing mode of the undamped linearised dynamics (0 when stable), with its
  frequency [Hz].

Laws compared: the paper's one-way law, the passive law (``RodParams.coupling_law``) and no
coupling (``C_eps = 0``, the motors still twist the rods).  The finite-difference Jacobian has
relative errors ~1e-6, so growth rates below ~1 1/s are noise.

    python benchmarks/circulation.py                 # 7 primitives, 25 elements
    python benchmarks/circulation.py --elements 8 --primitives bend_north,twist_ccw
"""

from __future__ import annotations

import argparse

import numpy as np

from hsa_elastica.engines.statics_kernels import KIND_ELEMENT, KIND_NODE
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles
from hsa_elastica.robots.statics_api import solve_static, static_solver


def analyse(params, angles):  # type: ignore[no-untyped-def]
    """(asymmetry total / node-node / node-element / element-element, growth [1/s], f [Hz]),
    or None when the static solver fell back to dynamic relaxation."""
    a = np.asarray(angles, dtype=np.float64)
    if solve_static(params, a).method != "static":
        return None  # Newton failed: a relaxed pose is not an exact equilibrium, no analysis
    solver, _ = static_solver(params)
    f0 = solver.evaluate(a).copy()
    jac = solver.jacobian(a, f0).toarray()
    anti, sym = 0.5 * (jac - jac.T), 0.5 * (jac + jac.T)
    node, elem = solver.kind == KIND_NODE, solver.kind == KIND_ELEMENT

    def ratio(rows, cols):  # type: ignore[no-untyped-def]
        m = np.outer(rows, cols)
        return float(np.linalg.norm(anti[m]) / max(np.linalg.norm(sym[m]), 1e-300))

    lam = np.linalg.eigvals(jac / solver.inertia[:, None])
    roots = np.sqrt(lam.astype(complex))
    j = int(np.argmax(roots.real))
    return (
        ratio(np.ones_like(node), np.ones_like(node)), ratio(node, node), ratio(node, elem),
        ratio(elem, elem), float(roots.real[j]), float(abs(roots.imag[j])) / (2 * np.pi),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--elements", type=int, default=25)
    ap.add_argument("--primitives", default="all", help="comma list or 'all'")
    args = ap.parse_args()
    names = list(PRIMITIVES) if args.primitives == "all" else args.primitives.split(",")
    base = paper_robot_params()
    laws = {
        "one_way": base.rod.replace(n_elements=args.elements),
        "passive": base.rod.replace(n_elements=args.elements, coupling_law="passive"),
        "C_eps=0": base.rod.replace(n_elements=args.elements, C_eps=0.0),
    }
    print(f"{'case':<11} {'law':<8} {'asym':>8} {'node-node':>9} {'node-elem':>9} {'elem-elem':>9}"
          f" {'growth 1/s':>10} {'f Hz':>7}")
    for name in names:
        for law, rod in laws.items():
            r = analyse(base.replace(rod=rod), primitive_angles(name, 1.0))
            if r is None:
                print(f"{name:<11} {law:<8} (no static solution: Newton fell back to dynamics)")
                continue
            print(f"{name:<11} {law:<8} {r[0]:8.1e} {r[1]:9.1e} {r[2]:9.1e} {r[3]:9.1e}"
                  f" {r[4]:10.2f} {r[5]:7.0f}")


if __name__ == "__main__":
    main()
