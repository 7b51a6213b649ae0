"""The auxetic coupling of an HSA rod (paper Section II-B, Eq. 2-5) as a PyElastica forcing.

:class:`AuxeticCoupling` (a ``NoForces``) rewrites the rest configuration of a stock
:class:`elastica.CosseratRod` in place once per step -- rest lengths and rest Voronoi lengths
(Eq. 2-4), the stiffness diagonals (Eq. 5, :class:`TwistStiffnessLaw`) -- by calling
:func:`hsa_elastica.physics.auxetic_law.auxetic_update`, the kernel every engine shares.

Timing: PyElastica calls forcings after the internal forces of the step were computed.  The
coupling writes the rest configuration for the current directors and then recomputes the
rod's internal forces and torques (``compute_internal_forces_and_torques``), so there is no
lag of the rest length behind the twist (a one-step lag is an O(dt) delay in a stiff loop and
self-excites the stretch-twist mode, docs/stability.md).  Cost: one extra internal-force
evaluation per rod and step.  Add the coupling before any forcing that reads internal forces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.typing import NDArray

from elastica.external_forces import NoForces

from hsa_elastica.compat import compiled_entry, inv_rotate
from hsa_elastica.params import RodParams, invalid_parameter, is_finite_number
from hsa_elastica.physics.auxetic_law import (
    ALPHA_C,
    PASSIVE_CLIP_WIDTH,
    auxetic_update,
    handed_twist_strain,
    reciprocal_twist_couple,
)
from hsa_elastica.physics.hysteresis import check_hysteresis
from hsa_elastica.physics.tables import CouplingTable
from hsa_elastica.physics.variational_rod import elastic_state, variational_correction

if TYPE_CHECKING:
    from elastica.rod.cosserat_rod import CosseratRod

__all__ = ["ALPHA_C", "AuxeticCoupling", "TwistStiffnessLaw"]

_invalid = invalid_parameter
_finite = is_finite_number


def _row(field: str) -> Any:
    """Property: row 0 of field ``field`` of the operator's table (AttributeError before the
    first application)."""
    return property(lambda self: getattr(self._table, field)[0])


@dataclass(frozen=True)
class TwistStiffnessLaw:
    """Linear twist dependence of the rod stiffnesses (paper Eq. 5, Table I).

    The handed twist strain ``kappa_h`` [rad/m] is the same (clipped) strain that drives the
    rest-length law.  Each slope multiplies it; all default to 0 (no dependence).

    Attributes
    ----------
    E_slope : float
        d E / d kappa_h [Pa m/rad]; ``S_zz = (E0 + E_slope * kappa_h) * A``.
    G_slope : float
        d G / d kappa_h [Pa m/rad]; ``S_xx = S_yy = alpha_c * (G0 + G_slope * kappa_h) * A``.
    bend_rigidity_slope : float
        d B_xy / d kappa_h [N m^2 m/rad]; ``B_xx = B_yy = B_xy0 + slope * kappa_h``.
    twist_rigidity_slope : float
        d B_z / d kappa_h [N m^2 m/rad]; ``B_zz = B_z0 + slope * kappa_h`` (then scaled by the
        Voronoi elongation like the constant twist rigidity).
    E_quad : float
        Optional quadratic term (not in the paper, default 0) [Pa m^2/rad^2]:
        ``S_zz = (E0 + E_slope * kappa_h + E_quad * kappa_h^2) * A``.
    twist_rigidity_quad : float
        Optional quadratic term (default 0) [N m^2 m^2/rad^2]:
        ``B_zz = B_z0 + twist_rigidity_slope * kappa_h + twist_rigidity_quad * kappa_h^2``.
    """

    E_slope: float = 0.0
    G_slope: float = 0.0
    bend_rigidity_slope: float = 0.0
    twist_rigidity_slope: float = 0.0
    E_quad: float = 0.0
    twist_rigidity_quad: float = 0.0

    def __post_init__(self) -> None:
        units = {
            "E_slope": "Pa m/rad",
            "G_slope": "Pa m/rad",
            "bend_rigidity_slope": "N m^2 m/rad",
            "twist_rigidity_slope": "N m^2 m/rad",
            "E_quad": "Pa m^2/rad^2",
            "twist_rigidity_quad": "N m^2 m^2/rad^2",
        }
        for name, unit in units.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not _finite(value):
                raise _invalid("TwistStiffnessLaw", name, value, f"a finite number ({unit})")
            object.__setattr__(self, name, float(value))

    @classmethod
    def from_params(cls, rod_params: RodParams) -> "TwistStiffnessLaw | None":
        """Eq. 5 law of ``rod_params`` (every slope and quadratic term), or None when all are
        zero (the printed stiffnesses)."""
        law = cls(
            E_slope=rod_params.E_slope,
            G_slope=rod_params.G_slope,
            bend_rigidity_slope=rod_params.bend_rigidity_slope,
            twist_rigidity_slope=rod_params.twist_rigidity_slope,
            E_quad=rod_params.E_quad,
            twist_rigidity_quad=rod_params.twist_rigidity_quad,
        )
        return None if law.is_constant else law

    @property
    def is_constant(self) -> bool:
        """True when every slope is zero."""
        return (
            self.E_slope == 0.0
            and self.G_slope == 0.0
            and self.bend_rigidity_slope == 0.0
            and self.twist_rigidity_slope == 0.0
            and self.E_quad == 0.0
            and self.twist_rigidity_quad == 0.0
        )


class AuxeticCoupling(NoForces):
    """HSA auxetic coupling of twist and rest length (Eq. 2-5) as a PyElastica forcing.

    Usage (every law parameter of a :class:`~hsa_elastica.params.RodParams`, so a fitted law
    cannot be dropped by copying fields by hand)::

        sim.add_forcing_to(rod).using(AuxeticCoupling, **AuxeticCoupling.params_kwargs(p))
        coupling = AuxeticCoupling.from_params(p)  # an instance, for direct use

    or by hand::

        sim.add_forcing_to(rod).using(AuxeticCoupling, handedness=+1, C_eps=0.01,
                                      eps_min=0.0, eps_max=0.5, stiffness=None)

    The printed geometry (rest lengths, rest Voronoi lengths, shear and bend matrices) is read
    from the rod the first time the operator is applied (PyElastica instantiates forcings at
    ``finalize()`` without handing them the rod), so build the rod with its printed geometry.
    The operator writes ``rest_lengths``, ``rest_voronoi_lengths`` and the diagonals of
    ``shear_matrix`` / ``bend_matrix`` in place, so memory blocks see the change.  With
    ``reciprocal=True`` (default False) it is the passive model: it also applies the twist couple
    conjugate to the rest-length law (:func:`reciprocal_twist_couple`) and replaces the rod's
    elastic forces by the exact gradient of one discrete energy
    (:mod:`hsa_elastica.physics.variational_rod`), so that the coupled rod cannot create energy.

    Parameters (keyword-only)
    -------------------------
    handedness : int
        +1 right-handed (elongates under positive base angles), -1 left-handed.
    C_eps : float
        Extension factor [m/rad], >= 0: ``eps = C_eps * kappa_h``.
    C_eps2 : float
        Optional quadratic term of the rest-length law [m^2/rad^2], default 0 (the paper's
        linear law): ``eps = clip(C_eps k + C_eps2 k^2, eps_min, eps_max)`` with ``k`` the handed
        twist strain clipped to ``[eps_min, eps_max] / C_eps`` (:func:`rest_strain`).  Needs
        ``C_eps > 0`` and ``C_eps + 2 C_eps2 k >= 0`` over that range.
    eps_min, eps_max : float
        Limits of the axial strain [-], both in (-1, 10] with ``eps_min <= eps_max``.  A closed
        HSA has ``eps_min = 0``.  (``eps_min > 0`` would stretch the rod at zero twist.)
    stiffness : TwistStiffnessLaw or None
        Optional Eq. 5 stiffness law; None keeps the printed stiffnesses (only the twist
        rigidity is scaled by the Voronoi elongation).
    area : float or None
        Cross-section area [m^2] used by the stiffness law; None reads it from the rod as
        ``volume / rest_lengths`` on the first application (the area of PyElastica's circular
        section, i.e. the tube area when the rod was built with the equivalent radius
        ``sqrt(A / pi)``).
    twist_filter_time : float
        Optional robustness option [s], default 0 (off, the paper's model).  When > 0 the handed
        twist strain is passed through a first-order low pass with this time constant before
        the rest-length and stiffness laws, which removes the high-frequency feedback path
        twist -> rest length -> axial force (see docs/stability.md).  Steady states are
        unchanged.
    creep_fraction, creep_time : float
        Optional creep of the rest strain (not in the paper), default 0 and 0 (off):
        ``creep_fraction`` [-] in [0, 1], ``creep_time`` [s] in (0, 1e5] (both > 0 or both 0).
        The rest strain is ``eps + eps_c`` with ``creep_time * d eps_c/dt = creep_fraction *
        eps - eps_c`` per element (:func:`~hsa_elastica.physics.auxetic_law.creep_blend`).
    hysteresis_width, hysteresis_weight : float
        Optional rate-independent hysteresis of the rest-length law (not in the paper),
        default 0 and 0 (off): half-width ``r`` [rad/m] in [0, 1000] and weight ``w`` [-] in
        [0, 1] of a play operator on the handed twist strain
        (:mod:`hsa_elastica.physics.hysteresis`); ``w > 0`` when ``r > 0``; not with
        ``reciprocal=True`` (a hysteretic rest length has no energy).
    reciprocal : bool
        Default False (the paper's one-way model on PyElastica's rod).  True: the passive model
        (``RodParams.coupling_law = "passive"``): the reciprocal twist couple
        ``M_k = dU/dtheta_k`` of the rod's energy through the twist dependence of the rest
        lengths (an axially loaded HSA produces a twist torque, Maxwell-Betti) and the
        exact-gradient internal forces of :mod:`hsa_elastica.physics.variational_rod` (bend/twist
        couple ``B kappa`` instead of PyElastica's ``B kappa / E^3``).  Unloaded equilibria of
        straight rods are unchanged.  Needs zero rest curvature and rest shear (straight
        rods); not allowed with ``twist_filter_time > 0``.

    Diagnostics (read-only, None before the first application)
    ----------------------------------------------------------
    eps : (n,) axial strain of each element [-].
    kappa_h : (n,) unclipped element average of the handed twist strain [rad/m].
    kappa_h_voronoi : (n-1,) handed twist strain on the Voronoi domain [rad/m].
    reciprocal_couple : (n-1,) reciprocal twist couple of the last step [N m].
    """

    @staticmethod
    def params_kwargs(rod_params: RodParams) -> dict[str, Any]:
        """Keyword arguments carrying every law parameter of ``rod_params``: handedness,
        ``C_eps``, ``C_eps2``, ``eps_min``, ``eps_max``, the Eq. 5 slopes and quadratic terms
        (:meth:`TwistStiffnessLaw.from_params`), the tube area and ``twist_filter_time`` --
        for ``sim.add_forcing_to(rod).using(AuxeticCoupling, **kwargs)``."""
        if not isinstance(rod_params, RodParams):
            raise invalid_parameter(
                "AuxeticCoupling", "rod_params", rod_params, "a RodParams"
            )
        return dict(
            handedness=rod_params.handedness,
            C_eps=rod_params.C_eps,
            eps_min=rod_params.eps_min,
            eps_max=rod_params.eps_max,
            stiffness=TwistStiffnessLaw.from_params(rod_params),
            area=rod_params.area,
            twist_filter_time=rod_params.twist_filter_time,
            C_eps2=rod_params.C_eps2,
            creep_fraction=rod_params.creep_fraction,
            creep_time=rod_params.creep_time,
            hysteresis_width=rod_params.hysteresis_width,
            hysteresis_weight=rod_params.hysteresis_weight,
            reciprocal=rod_params.coupling_law == "passive",
        )

    @classmethod
    def from_params(cls, rod_params: RodParams, **overrides: Any) -> "AuxeticCoupling":
        """The coupling of ``rod_params`` with every law parameter (see :meth:`params_kwargs`);
        ``overrides`` (e.g. ``reciprocal=True``) replace single keyword arguments."""
        kwargs = cls.params_kwargs(rod_params)
        kwargs.update(overrides)
        return cls(**kwargs)

    def __init__(
        self,
        *,
        handedness: int,
        C_eps: float,
        eps_min: float = 0.0,
        eps_max: float = 0.5,
        stiffness: TwistStiffnessLaw | None = None,
        area: float | None = None,
        twist_filter_time: float = 0.0,
        reciprocal: bool = False,
        C_eps2: float = 0.0,
        creep_fraction: float = 0.0,
        creep_time: float = 0.0,
        hysteresis_width: float = 0.0,
        hysteresis_weight: float = 0.0,
    ) -> None:
        super().__init__()
        owner = "AuxeticCoupling"
        if isinstance(handedness, bool) or handedness not in (1, -1):
            raise _invalid(owner, "handedness", handedness, "+1 (right-handed) or -1 (left-handed)")
        if isinstance(C_eps, bool) or not _finite(C_eps) or float(C_eps) < 0.0:
            raise _invalid(owner, "C_eps", C_eps, "a finite number >= 0 (m/rad)")
        for name, value in (("eps_min", eps_min), ("eps_max", eps_max)):
            if isinstance(value, bool) or not _finite(value) or not -1.0 < float(value) <= 10.0:
                raise _invalid(owner, name, value, "a finite number in (-1, 10] (-)")
        if float(eps_min) > float(eps_max):
            raise _invalid(owner, "eps_min", eps_min, f"<= eps_max = {eps_max!r} (-)")
        if isinstance(C_eps2, bool) or not _finite(C_eps2):
            raise _invalid(owner, "C_eps2", C_eps2, "a finite number (m^2/rad^2)")
        if float(C_eps2) != 0.0:
            if float(C_eps) == 0.0:
                raise _invalid(owner, "C_eps2", C_eps2, "0 when C_eps = 0 (m^2/rad^2)")
            for k_end in (float(eps_min) / float(C_eps), float(eps_max) / float(C_eps)):
                if float(C_eps) + 2.0 * float(C_eps2) * k_end < 0.0:
                    raise _invalid(
                        owner, "C_eps2", C_eps2,
                        "such that d eps/d k = C_eps + 2 C_eps2 k >= 0 over "
                        f"[eps_min, eps_max] / C_eps (fails at k = {k_end:.6g} rad/m) (m^2/rad^2)",
                    )
        if stiffness is not None and not isinstance(stiffness, TwistStiffnessLaw):
            raise _invalid(owner, "stiffness", stiffness, "a TwistStiffnessLaw or None")
        if area is not None and (
            isinstance(area, bool) or not _finite(area) or float(area) <= 0.0
        ):
            raise _invalid(owner, "area", area, "None or a finite number > 0 (m^2)")
        _check_memory(owner, twist_filter_time, reciprocal, creep_fraction, creep_time)
        check_hysteresis(owner, hysteresis_width, hysteresis_weight, reciprocal)

        self.handedness = int(handedness)
        self.reciprocal = bool(reciprocal)
        #: blend width of the rounded clip [-]: the passive model's, 0 (hard) for the paper's
        self.clip_width = PASSIVE_CLIP_WIDTH if self.reciprocal else 0.0
        self.C_eps = float(C_eps)
        self.C_eps2 = float(C_eps2)
        self.eps_min = float(eps_min)
        self.eps_max = float(eps_max)
        self.stiffness = stiffness if stiffness is not None else TwistStiffnessLaw()
        self.area = None if area is None else float(area)
        self.twist_filter_time = float(twist_filter_time)
        self.creep_fraction = float(creep_fraction)
        self.creep_time = float(creep_time)
        self.hysteresis_width = float(hysteresis_width)
        self.hysteresis_weight = float(hysteresis_weight)

        # Range of kappa_h seen by the stiffness law: the one the rest-length law is clipped to.
        if self.C_eps > 0.0:
            self.kappa_h_min = self.eps_min / self.C_eps
            self.kappa_h_max = self.eps_max / self.C_eps
        else:
            self.kappa_h_min = -np.inf
            self.kappa_h_max = np.inf

        self._initialized = False
        self._last_time = 0.0
        # compiled entry points of the kernels (set at the first call; compat.compiled_entry)
        self._update: Any = None
        self._couple_kernel: Any = None

    # the law's parameters and state: row 0 of the operator's own table (views, so that a
    # snapshot restores the table alone)
    _printed_lengths = _row("printed_lengths")
    _printed_voronoi = _row("printed_voronoi")
    _printed_shear = _row("printed_shear")
    _printed_bend = _row("printed_bend")
    _kappa_h_vor = _row("kappa_vor")
    _kappa_h_elem = _row("kappa_elem")
    _eps = _row("eps")
    _couple = _row("couple")
    _work = _row("work")

    @property
    def _area(self) -> float:
        return float(self._table.area[0])

    # -- diagnostics -------------------------------------------------------------------------
    @staticmethod
    def _readonly(array: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
        if array is None:
            return None
        view = array.view()
        view.flags.writeable = False
        return view

    @property
    def eps(self) -> NDArray[np.float64] | None:
        """Axial strain of each element [-] (None before the first application)."""
        return self._readonly(getattr(self, "_eps", None))

    @property
    def kappa_h(self) -> NDArray[np.float64] | None:
        """Unclipped element average of the handed twist strain [rad/m]."""
        return self._readonly(getattr(self, "_kappa_h_elem", None))

    @property
    def kappa_h_voronoi(self) -> NDArray[np.float64] | None:
        """Handed twist strain on the Voronoi domain [rad/m] (filtered if the option is on)."""
        return self._readonly(getattr(self, "_kappa_h_vor", None))

    @property
    def reciprocal_couple(self) -> NDArray[np.float64] | None:
        """Reciprocal twist couple ``M_k`` of the last step [N m] (zeros if disabled)."""
        return self._readonly(getattr(self, "_couple", None))

    @property
    def printed_lengths(self) -> NDArray[np.float64] | None:
        """Printed element lengths captured on the first application [m]."""
        return self._readonly(getattr(self, "_printed_lengths", None))

    @property
    def printed_voronoi_lengths(self) -> NDArray[np.float64] | None:
        """Printed Voronoi lengths captured on the first application [m]."""
        return self._readonly(getattr(self, "_printed_voronoi", None))

    # -- setup -------------------------------------------------------------------------------
    def _capture_printed_geometry(self, system: CosseratRod, time: float) -> None:
        self._table = coupling_table([(self, system)], [(0, 0, 0)])
        if self.reciprocal and (
            np.any(np.asarray(system.rest_kappa) != 0.0) or np.any(np.asarray(system.rest_sigma) != 0.0)
        ):
            raise ValueError(
                "AuxeticCoupling.reciprocal = True is invalid for this rod: the passive model "
                "needs a straight printed rod (rest_kappa and rest_sigma all 0)"
            )
        self._check_stiffness_positive()
        # the filter starts from the strain present at the first application
        handed_twist_strain(
            system.director_collection,
            self._printed_voronoi,
            float(self.handedness),
            self._kappa_h_vor,
        )
        self._last_time = float(time)
        self._initialized = True

    def _check_stiffness_positive(self) -> None:
        """Raise if the stiffness law gives a non-positive stiffness in the clipped range."""
        law = self.stiffness
        if law.is_constant or not (
            np.isfinite(self.kappa_h_min) and np.isfinite(self.kappa_h_max)
        ):
            return  # constant law, or unbounded range: checked every step instead
        A = self._area
        shear, bend = self._printed_shear, self._printed_bend
        # (slope name, quadratic name, slope, quadratic coefficient, printed value, formula)
        checks: tuple[tuple[str, str, float, float, NDArray[np.float64], str], ...] = (
            ("E_slope", "E_quad", law.E_slope * A, law.E_quad * A, shear[2, 2, :],
             "S_zz = (E0 + E_slope k) A"),
            ("G_slope", "", ALPHA_C * law.G_slope * A, 0.0,
             np.minimum(shear[0, 0, :], shear[1, 1, :]), "S_xx = S_yy = alpha_c (G0 + G_slope k) A"),
            ("bend_rigidity_slope", "", law.bend_rigidity_slope, 0.0,
             np.minimum(bend[0, 0, :], bend[1, 1, :]), "B_xy = B_xy0 + slope k"),
            ("twist_rigidity_slope", "twist_rigidity_quad", law.twist_rigidity_slope,
             law.twist_rigidity_quad, bend[2, 2, :], "B_z = B_z0 + slope k"),
        )
        for name, quad_name, slope, quad, base, formula in checks:
            ks = [self.kappa_h_min, self.kappa_h_max]
            if quad > 0.0 and self.kappa_h_min < -slope / (2.0 * quad) < self.kappa_h_max:
                ks.append(-slope / (2.0 * quad))  # convex: interior minimum
            if quad != 0.0:
                name = quad_name
                formula = formula.replace(" k", " k + quad k^2", 1)
            for k in ks:
                worst = float(np.min(base + slope * k + quad * k * k))
                if worst <= 0.0:
                    raise ValueError(
                        f"TwistStiffnessLaw.{name} = {getattr(law, name)!r} is invalid: "
                        f"{formula} reaches {worst:.6g} <= 0 at kappa_h = {k:.6g} rad/m, the "
                        f"end of the clipped range [eps_min/C_eps, eps_max/C_eps] = "
                        f"[{self.kappa_h_min:.6g}, {self.kappa_h_max:.6g}] rad/m; the "
                        f"stiffness must stay > 0 over that range"
                    )

    # -- operator ----------------------------------------------------------------------------
    def apply_forces(self, system: CosseratRod, time: np.float64 = np.float64(0.0)) -> None:
        """Update rest lengths and stiffnesses of ``system`` in place, recompute its internal
        forces/torques with them, and compute the reciprocal couple (applied by
        :meth:`apply_torques`)."""
        t = float(time)
        if not self._initialized:
            self._capture_printed_geometry(system, t)

        if self.twist_filter_time > 0.0:
            blend = 1.0 - math.exp(-max(t - self._last_time, 0.0) / self.twist_filter_time)
        else:
            blend = -1.0  # no filter
        self._last_time = t
        self._table.last_time[0] = t  # the creep's clock (auxetic_law.creep_blend)
        law = self.stiffness
        args = (inv_rotate(system.director_collection), self._table, 0, blend,
                system.rest_lengths, system.rest_voronoi_lengths, system.shear_matrix,
                system.bend_matrix)
        if self._update is None:  # the kernel's entry point for these argument types
            self._update = compiled_entry(auxetic_update, args)
        smallest = self._update(*args)
        # PyElastica computed the internal forces of this step before calling the forcings,
        # with the rest configuration of the previous step.  Recompute them with the one just
        # written: a one-step lag of the rest length behind the twist is an O(dt) delay in a
        # stiff feedback loop and self-excites the stretch-twist mode (docs/stability.md).
        system.compute_internal_forces_and_torques(time)
        if self.reciprocal:
            # derivative of the energy whose forces act in this step (sigma, internal_stress
            # and kappa just recomputed)
            args2 = (system.sigma, system.dilatation, system.kappa, system.shear_matrix,
                     system.bend_matrix, self._table, 0)
            if self._couple_kernel is None:
                self._couple_kernel = compiled_entry(reciprocal_twist_couple, args2)
            self._couple_kernel(*args2)
        if not smallest > 0.0:
            raise FloatingPointError(
                f"AuxeticCoupling.stiffness gave a non-positive stiffness ({smallest:.6g}) at "
                f"t = {t:.6g} s: with C_eps = 0 the twist strain is not clipped, so the linear "
                f"TwistStiffnessLaw {law} must stay positive for the twist that occurs; "
                f"use C_eps > 0 with eps limits, or smaller slopes"
            )

    def apply_torques(self, system: CosseratRod, time: np.float64 = np.float64(0.0)) -> None:
        """Passive model (``reciprocal=True``): add the reciprocal twist couple computed by
        :meth:`apply_forces` and the exact-gradient correction of the rod's elastic forces
        (:func:`variational_correction`) to its external forces and torques."""
        if self.reciprocal and self._initialized:
            # the rod's arrays as a record, made at each call: an operator attribute holding
            # views of them would be copied into and out of state snapshots as state
            variational_correction(
                elastic_state(system), self._couple, system.external_forces, system.external_torques,
                self._work,
            )


def _check_memory(owner: str, twist_filter_time: Any, reciprocal: Any, creep_fraction: Any,
                  creep_time: Any) -> None:
    """The twist filter's, the passive model's and the creep's parameters (one line naming the
    field)."""
    if (
        isinstance(twist_filter_time, bool)
        or not _finite(twist_filter_time)
        or float(twist_filter_time) < 0.0
    ):
        raise _invalid(owner, "twist_filter_time", twist_filter_time, "a finite number >= 0 (s)")
    if not isinstance(reciprocal, (bool, np.bool_)):
        raise _invalid(owner, "reciprocal", reciprocal, "True or False")
    if reciprocal and float(twist_filter_time) > 0.0:
        raise _invalid(
            owner, "reciprocal", reciprocal,
            "False when twist_filter_time > 0 (a lagged rest length makes the reciprocal "
            "couple non-conservative; it diverges, docs/stability.md)",
        )
    for name, value, upper, unit in (("creep_fraction", creep_fraction, 1.0, "-"),
                                     ("creep_time", creep_time, 1e5, "s")):
        if isinstance(value, bool) or not _finite(value) or not 0.0 <= float(value) <= upper:
            raise _invalid(owner, name, value, f"a finite number in [0, {upper:g}] ({unit})")
    if (float(creep_fraction) > 0.0) != (float(creep_time) > 0.0):
        raise _invalid(owner, "creep_time", creep_time,
                       "> 0 (s) when creep_fraction > 0, and 0 when creep_fraction = 0")


def coupling_table(
    items: "list[tuple[AuxeticCoupling, Any]]", offsets: "list[tuple[int, int, int]]"
) -> CouplingTable:
    """The :class:`~hsa_elastica.physics.tables.CouplingTable` of the couplings ``items``
    (``(coupling, rod)`` pairs, rods fresh: their rest lengths and stiffnesses are the printed
    ones), rod ``k``'s first node, element and Voronoi entry at ``offsets[k]`` of the arrays
    the kernels will be given.  The operator builds its own one-row table (offsets 0); the
    compiler one for all couplings of a simulator (offsets into the memory block)."""
    n = len(items)
    ne = int(items[0][1].n_elems) if n else 1  # (all rods have as many elements: caller)
    nv = ne - 1 if n else 1

    def col(f: Callable[[AuxeticCoupling], float]) -> NDArray[np.float64]:
        return np.array([f(c) for c, _ in items], dtype=np.float64)

    areas = []
    for c, rod in items:
        if c.area is None:
            areas.append(float(np.mean(np.asarray(rod.volume) / np.asarray(rod.rest_lengths))))
        else:
            areas.append(float(c.area))
    z = lambda *shape: np.zeros((n, *shape))  # noqa: E731
    return CouplingTable(
        elem_start=np.array([o[1] for o in offsets], dtype=np.int64),
        vor_start=np.array([o[2] for o in offsets], dtype=np.int64),
        handedness=col(lambda c: float(c.handedness)),
        C_eps=col(lambda c: c.C_eps),
        C_eps2=col(lambda c: float(getattr(c, "C_eps2", 0.0))),
        eps_min=col(lambda c: c.eps_min),
        eps_max=col(lambda c: c.eps_max),
        kappa_min=col(lambda c: c.kappa_h_min),
        kappa_max=col(lambda c: c.kappa_h_max),
        area=np.array(areas, dtype=np.float64),
        E_slope=col(lambda c: c.stiffness.E_slope),
        G_slope=col(lambda c: c.stiffness.G_slope),
        bend_slope=col(lambda c: c.stiffness.bend_rigidity_slope),
        twist_slope=col(lambda c: c.stiffness.twist_rigidity_slope),
        E_quad=col(lambda c: c.stiffness.E_quad),
        twist_quad=col(lambda c: c.stiffness.twist_rigidity_quad),
        filter_time=col(lambda c: float(getattr(c, "twist_filter_time", 0.0))),
        creep_fraction=col(lambda c: float(getattr(c, "creep_fraction", 0.0))),
        creep_time=col(lambda c: float(getattr(c, "creep_time", 0.0))),
        printed_lengths=np.array([np.array(r.rest_lengths) for _, r in items]).reshape(n, ne),
        printed_voronoi=np.array([np.array(r.rest_voronoi_lengths) for _, r in items]).reshape(n, nv),
        printed_shear=np.array([np.array(r.shear_matrix) for _, r in items]).reshape(n, 3, 3, ne),
        printed_bend=np.array([np.array(r.bend_matrix) for _, r in items]).reshape(n, 3, 3, nv),
        kappa_vor_raw=z(nv),
        kappa_vor=z(nv),
        kappa_vor_clipped=z(nv),
        kappa_elem=z(ne),
        kappa_elem_clipped=z(ne),
        eps=z(ne),
        last_time=np.zeros(n),
        initialized=np.zeros(n, dtype=np.int64),
        couple=z(nv),
        node_start=np.array([o[0] for o in offsets], dtype=np.int64),
        clip_width=col(lambda c: c.clip_width),
        work=z(3, ne),
        eps_creep=z(ne),
        creep_last=np.full(n, -np.inf),
        play_width=col(lambda c: float(getattr(c, "hysteresis_width", 0.0))),
        play_weight=col(lambda c: float(getattr(c, "hysteresis_weight", 0.0))),
        play_frozen=np.zeros(n, dtype=np.int64),
        play=z(ne),
        play_last=np.full(n, -np.inf),
        play_trial=z(2 * ne),
    )
