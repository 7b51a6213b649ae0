"""HSA rod parameters (:class:`RodParams`, Eqs. (2)-(5) of the paper) and the default
Kelvin-Voigt retardation times of the TPU (SI units)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hsa_elastica.params.base import (
    ALPHA_C,
    MAX_C_EPS,
    MAX_MODULUS,
    MAX_N_ELEMENTS,
    MAX_PLAY_WIDTH,
    MIN_DENSITY,
    MIN_LENGTH,
    MIN_MODULUS,
    MIN_RIGIDITY,
    _check_handedness,
    _check_int,
    _check_real,
    _fail,
    _ParamsBase,
)

#: loss factor tan(delta) of the TPU for the default Kelvin-Voigt damping: the logarithmic
#: centre of the range 0.05-0.20 tabulated for polyurethane (PU, Shore A 60-95) at 10-100 Hz in
#: "Tan delta and Damping Values for Different Rubber Types",
#: https://materialmap.github.io/rubber_damping_reference.html (a compilation; no measurement
#: of Carbon FPU 50 itself was available; docs/stability.md)
TPU_LOSS_FACTOR = 0.1
#: default retardation times [s]: tan(delta) / omega of the paper robot's lowest mode that
#: loads the strain (elongation bounce: axial/shear; bending sway: bend/twist; docs/stability.md)
RETARDATION_AXIAL = 7.5e-5
RETARDATION_BEND = 1.0e-3
#: names of the auxetic coupling laws (:attr:`RodParams.coupling_law`)
COUPLING_LAWS = ("one_way", "passive")
RETARDATION_FIELDS = (
    "retardation_time_axial",
    "retardation_time_shear",
    "retardation_time_bend",
    "retardation_time_twist",
)


@dataclass(frozen=True)
class RodParams(_ParamsBase):
    """One HSA rod: a hollow tube with the auxetic coupling of Eqs. (2)-(5).

    The stiffness law (Eq. 5) is, per element, with the handed twist strain ``kappa_h`` [rad/m]::

        S_zz = (youngs_modulus + E_slope * kappa_h) * area
        S_xx = S_yy = 27/28 * (shear_modulus + G_slope * kappa_h) * area
        B_xx = B_yy = B_xy + bend_rigidity_slope * kappa_h
        B_zz = B_z + twist_rigidity_slope * kappa_h

    and the rest-length law (Eqs. 2-3) is ``eps = clip(C_eps * kappa_h, eps_min, eps_max)``.

    Optional richer twist laws (not in the paper, whose conclusion notes that the linear law
    only holds in a limited range; all default to 0, the paper's linear model, bit-identical):
    with ``k = clip(kappa_h, eps_min / C_eps, eps_max / C_eps)`` (the clipped twist range of
    the linear law)::

        eps  = clip(C_eps * k + C_eps2 * k^2, eps_min, eps_max)
        S_zz = (youngs_modulus + E_slope * k + E_quad * k^2) * area
        B_zz = B_z + twist_rigidity_slope * k + twist_rigidity_quad * k^2

    ``C_eps2`` [m^2/rad^2], ``E_quad`` [Pa m^2/rad^2], ``twist_rigidity_quad``
    [N m^2 m^2/rad^2]; they need ``C_eps > 0`` (a bounded range), the rest-length polynomial
    must be non-decreasing and the stiffnesses positive over the whole range (validated).

    Rigid end caps (``cap_length_base``, ``cap_length_top`` [m], default 0): printed rods end
    in rigid caps that do not deform.  ``length`` and every law above describe the *flexible*
    auxetic part only.  The base cap stands on the base plate along the rod axis and turns with
    the motor about its own axis, so the flexible part starts ``cap_length_base`` above the
    plate with the same motor boundary condition; the top cap is part of the platform, so the
    joint attaches ``cap_length_top`` below the platform's lower face (see
    :func:`hsa_elastica.robots.builders.build_robot`).  The caps are massless (put their mass
    into ``PlatformParams.payload_mass`` if it matters).

    ``coupling_law`` selects how the rest-length law acts: ``"one_way"`` is the paper's model
    (Eqs. 2-4: the rest length follows the twist, nothing acts back on the twist);
    ``"passive"`` adds the twist couple conjugate to the rest-length law (Maxwell-Betti: pulling
    an HSA untwists it), which makes the coupling the gradient of the rods' elastic energy, so it
    cannot create energy (docs/stability.md).  Both give the same free length, blocked force,
    holding torque and spring constant of a single rod (the couple vanishes at zero axial
    stress and the motors impose the twist).

    ``twist_filter_time`` [s] is not part of the paper's model: when > 0 the coupling low-passes
    the handed twist strain with this time constant (``AuxeticCoupling(twist_filter_time=...)``).
    It is a delayed feedback and does not make the model passive; the default is 0 (off): the
    Kelvin-Voigt material damping below keeps the robot stable (docs/stability.md).

    ``creep_fraction`` [-] in [0, 1] and ``creep_time`` [s] in (0, 1e5] (both 0: off, the
    default) are not part of the paper's model: the viscoelastic memory of the lattice.  The
    rest strain of Eq. 2-3 gains a creep part ``eps_c`` with ``creep_time * d eps_c/dt =
    creep_fraction * eps - eps_c``: after a long hold at the rest strain ``eps`` the rod is
    longer by ``creep_fraction * eps * length``, and recovers with ``creep_time`` after release
    (docs/model.md).  The static solver takes the creep strain as a given state.

    ``hysteresis_width`` ``r`` [rad/m] in [0, 1000] and ``hysteresis_weight`` ``w`` [-] in
    [0, 1] (both 0: off, the default; ``w > 0`` when ``r > 0``; not with the passive model) are
    not part of the paper's model: a rate-independent hysteresis between twisting and
    untwisting.  The rest-length law sees the handed twist strain ``x`` through a weighted
    play operator, ``y = x + w (F_r[x] - x)``, whose memory lags ``x`` by up to ``r``
    (:mod:`hsa_elastica.physics.hysteresis`, docs/model.md): loading and unloading differ
    by ``2 w r C_eps`` of rest strain.  The static solver takes the play's memory as a given
    state.

    ``retardation_time_axial`` / ``_shear`` / ``_bend`` / ``_twist`` [s] are the Kelvin-Voigt
    retardation times of the TPU (viscous stress = retardation time x stiffness x strain rate;
    :mod:`hsa_elastica.physics.material_damping`): a mode of angular frequency ``omega`` that
    loads mainly one strain has the loss factor ``omega tau`` and the damping ratio
    ``omega tau / 2``.  Defaults: ``TPU_LOSS_FACTOR / omega`` of the paper robot's elongation
    bounce (axial, shear) and bending sway (bend, twist); 0 switches a term off.
    """

    n_elements: int = field(default=25, metadata={"unit": "-"})
    length: float = field(default=0.100, metadata={"unit": "m, printed length"})
    outer_radius: float = field(default=0.0127, metadata={"unit": "m"})
    wall_thickness: float = field(default=0.00243, metadata={"unit": "m"})
    density: float = field(default=1050.0, metadata={"unit": "kg/m^3"})
    youngs_modulus: float = field(default=10e6, metadata={"unit": "Pa"})
    shear_modulus: float = field(default=0.6e6, metadata={"unit": "Pa"})
    bend_rigidity: float | None = field(
        default=0.02, metadata={"unit": "N m^2, None = E*I of the tube"}
    )
    twist_rigidity: float | None = field(
        default=0.014, metadata={"unit": "N m^2, None = G*J of the tube"}
    )
    handedness: int = field(default=1, metadata={"unit": "-"})
    C_eps: float = field(default=0.01, metadata={"unit": "m/rad"})
    eps_min: float = field(default=0.0, metadata={"unit": "-"})
    eps_max: float = field(default=0.5, metadata={"unit": "-"})
    E_slope: float = field(default=0.0, metadata={"unit": "Pa m/rad"})
    G_slope: float = field(default=0.0, metadata={"unit": "Pa m/rad"})
    bend_rigidity_slope: float = field(default=0.0, metadata={"unit": "N m^2 m/rad"})
    twist_rigidity_slope: float = field(default=0.0, metadata={"unit": "N m^2 m/rad"})
    coupling_law: str = field(
        default="one_way", metadata={"unit": "-, 'one_way' (paper) or 'passive'"}
    )
    twist_filter_time: float = field(
        default=0.0, metadata={"unit": "s, low pass of the coupling's twist strain, 0 = off"}
    )
    # optional creep of the auxetic rest strain (not in the paper; 0 = off)
    creep_fraction: float = field(
        default=0.0, metadata={"unit": "-, extra rest strain after a long hold / instantaneous"}
    )
    creep_time: float = field(default=0.0, metadata={"unit": "s, creep time constant"})
    # optional rate-independent hysteresis of the auxetic rest strain (not in the paper; 0 = off)
    hysteresis_width: float = field(
        default=0.0, metadata={"unit": "rad/m, half-width of the play on the handed twist strain"}
    )
    hysteresis_weight: float = field(
        default=0.0, metadata={"unit": "-, fraction of the twist strain through the play"}
    )
    # optional nonlinear twist laws (0 = the paper's linear model)
    C_eps2: float = field(default=0.0, metadata={"unit": "m^2/rad^2"})
    E_quad: float = field(default=0.0, metadata={"unit": "Pa m^2/rad^2"})
    twist_rigidity_quad: float = field(default=0.0, metadata={"unit": "N m^2 m^2/rad^2"})
    # rigid end caps of the printed rod (0 = none, the paper's model)
    cap_length_base: float = field(
        default=0.0, metadata={"unit": "m, rigid cap between base plate and flexible part"}
    )
    cap_length_top: float = field(
        default=0.0, metadata={"unit": "m, rigid cap between flexible part and platform"}
    )
    # Kelvin-Voigt material damping of the TPU (physics/material_damping.py); 0 = elastic
    retardation_time_axial: float = field(default=RETARDATION_AXIAL, metadata={"unit": "s"})
    retardation_time_shear: float = field(default=RETARDATION_AXIAL, metadata={"unit": "s"})
    retardation_time_bend: float = field(default=RETARDATION_BEND, metadata={"unit": "s"})
    retardation_time_twist: float = field(default=RETARDATION_BEND, metadata={"unit": "s"})

    def __post_init__(self) -> None:
        _check_int(self, "n_elements", ge=2, le=MAX_N_ELEMENTS)
        _check_real(self, "cap_length_base", ge=0.0)
        _check_real(self, "cap_length_top", ge=0.0)
        for name in ("length", "outer_radius"):
            _check_real(self, name, ge=MIN_LENGTH)
        _check_real(self, "density", ge=MIN_DENSITY)
        for name in ("youngs_modulus", "shear_modulus"):
            _check_real(self, name, ge=MIN_MODULUS, le=MAX_MODULUS)
        _check_real(self, "wall_thickness", ge=MIN_LENGTH)
        if self.wall_thickness > self.outer_radius:
            raise _fail(
                self,
                "wall_thickness",
                self.wall_thickness,
                f"must be >= {MIN_LENGTH:g} and <= outer_radius = {self.outer_radius!r}",
            )
        _check_real(self, "bend_rigidity", ge=MIN_RIGIDITY, optional=True)
        _check_real(self, "twist_rigidity", ge=MIN_RIGIDITY, optional=True)
        object.__setattr__(
            self, "handedness", _check_handedness(self, "handedness", self.handedness)
        )
        _check_real(self, "C_eps", ge=0.0, le=MAX_C_EPS)
        # zero twist must map to the printed length: eps_min <= 0 <= eps_max
        _check_real(self, "eps_min", gt=-1.0, le=0.0)
        _check_real(self, "eps_max", ge=0.0, le=10.0)
        if self.eps_min > self.eps_max:
            raise _fail(
                self, "eps_min", self.eps_min, f"must be <= eps_max = {self.eps_max!r}"
            )
        for name in ("E_slope", "G_slope", "bend_rigidity_slope", "twist_rigidity_slope"):
            _check_real(self, name)
        _check_real(self, "twist_filter_time", ge=0.0)
        _check_real(self, "creep_fraction", ge=0.0, le=1.0)
        _check_real(self, "creep_time", ge=0.0, le=1e5)
        if (self.creep_fraction > 0.0) != (self.creep_time > 0.0):
            raise _fail(
                self, "creep_time", self.creep_time,
                "must be > 0 (s) when creep_fraction > 0 and 0 when creep_fraction = 0",
            )
        self._check_hysteresis()
        if self.coupling_law not in COUPLING_LAWS:
            raise _fail(
                self, "coupling_law", self.coupling_law, f"must be one of {COUPLING_LAWS}"
            )
        if self.coupling_law == "passive" and self.twist_filter_time > 0.0:
            raise _fail(
                self, "coupling_law", self.coupling_law,
                "must be 'one_way' when twist_filter_time > 0 (a lagged rest length has no "
                "conjugate couple)",
            )
        for name in RETARDATION_FIELDS:
            _check_real(self, name, ge=0.0, le=1.0)
        for name in ("C_eps2", "E_quad", "twist_rigidity_quad"):
            _check_real(self, name)
            if getattr(self, name) != 0.0 and self.C_eps == 0.0:
                raise _fail(
                    self, name, getattr(self, name),
                    "must be 0 when C_eps = 0 (the nonlinear laws need the bounded twist range "
                    "[eps_min/C_eps, eps_max/C_eps])",
                )
        self._check_stiffness_positive()
        self._check_rest_length_monotone()

    def _check_hysteresis(self) -> None:
        """The play's two parameters (docstring of the class)."""
        _check_real(self, "hysteresis_width", ge=0.0, le=MAX_PLAY_WIDTH)
        _check_real(self, "hysteresis_weight", ge=0.0, le=1.0)
        if self.hysteresis_width > 0.0 and self.hysteresis_weight == 0.0:
            raise _fail(
                self, "hysteresis_weight", self.hysteresis_weight,
                "must be > 0 and <= 1 (-) when hysteresis_width > 0",
            )
        if self.hysteresis_weight > 0.0 and self.coupling_law == "passive":
            raise _fail(
                self, "hysteresis_weight", self.hysteresis_weight,
                "must be 0 when coupling_law = 'passive' (a hysteretic rest length has no energy)",
            )

    @property
    def is_nonlinear(self) -> bool:
        """True when any of the optional quadratic twist laws is on."""
        return self.C_eps2 != 0.0 or self.E_quad != 0.0 or self.twist_rigidity_quad != 0.0

    def _check_rest_length_monotone(self) -> None:
        """``d eps / d k = C_eps + 2 C_eps2 k >= 0`` over the clipped twist range (a rest length
        that shrinks under more twist would make the clip and the reciprocal couple ambiguous)."""
        if self.C_eps2 == 0.0:
            return
        for k in (self.eps_min / self.C_eps, self.eps_max / self.C_eps):
            slope = self.C_eps + 2.0 * self.C_eps2 * k
            if slope < 0.0:
                raise _fail(
                    self, "C_eps2", self.C_eps2,
                    f"makes d eps/d kappa_h = C_eps + 2 C_eps2 kappa_h = {slope:g} < 0 at "
                    f"kappa_h = {k:g} rad/m; must keep the rest-length law non-decreasing over "
                    f"[eps_min/C_eps, eps_max/C_eps]",
                )

    def _check_stiffness_positive(self) -> None:
        """Eq. 5 must give positive stiffnesses over the clipped strain range.

        The stiffness law sees ``kappa_h`` clipped to ``[eps_min, eps_max] / C_eps``; with
        ``C_eps == 0`` the range is unbounded and is checked by the stiffness law itself.
        """
        if self.C_eps == 0.0:
            return
        k_lo, k_hi = self.eps_min / self.C_eps, self.eps_max / self.C_eps
        checks = (
            # (field named in the error, base, slope, quadratic term, base field)
            ("E_quad" if self.E_quad else "E_slope", self.youngs_modulus, self.E_slope,
             self.E_quad, "youngs_modulus"),
            ("G_slope", self.shear_modulus, self.G_slope, 0.0, "shear_modulus"),
            ("bend_rigidity_slope", self.B_xy, self.bend_rigidity_slope, 0.0, "bend_rigidity"),
            ("twist_rigidity_quad" if self.twist_rigidity_quad else "twist_rigidity_slope",
             self.B_z, self.twist_rigidity_slope, self.twist_rigidity_quad, "twist_rigidity"),
        )
        for name, base, slope, quad, base_name in checks:
            # quad * k * k, not quad * k**2: float ** raises OverflowError for a huge k (a
            # tiny C_eps), multiplication gives inf (then refused below) or 0 for quad = 0
            worst = min(base + slope * k_lo + quad * k_lo * k_lo,
                        base + slope * k_hi + quad * k_hi * k_hi)
            if quad > 0.0:  # convex: the minimum may be inside the range
                k_v = -slope / (2.0 * quad)
                if k_lo < k_v < k_hi:
                    worst = min(worst, base + slope * k_v + quad * k_v * k_v)
            if not worst > 0.0:
                law = f"{base_name} + slope * kappa_h" + (" + quad * kappa_h^2" if quad else "")
                raise _fail(
                    self,
                    name,
                    getattr(self, name),
                    f"makes {law} = {worst:g} <= 0 for kappa_h in "
                    f"[eps_min/C_eps, eps_max/C_eps] = [{k_lo:g}, {k_hi:g}] rad/m; "
                    "must keep the stiffness > 0",
                )

    # ---- derived geometry (m, m^2, m^4) ------------------------------------------------
    @property
    def inner_radius(self) -> float:
        """Inner radius of the tube [m]."""
        return self.outer_radius - self.wall_thickness

    @property
    def area(self) -> float:
        """Tube cross-section area ``pi (r_o^2 - r_i^2)`` [m^2]."""
        return math.pi * (self.outer_radius**2 - self.inner_radius**2)

    @property
    def second_moment(self) -> float:
        """Area second moment about a diameter ``pi/4 (r_o^4 - r_i^4)`` [m^4] (I_xx = I_yy)."""
        return math.pi / 4.0 * (self.outer_radius**4 - self.inner_radius**4)

    @property
    def polar_moment(self) -> float:
        """Polar area moment ``J = 2 I = pi/2 (r_o^4 - r_i^4)`` [m^4]."""
        return 2.0 * self.second_moment

    @property
    def equivalent_radius(self) -> float:
        """Radius of the solid disk with the tube's area, ``sqrt(A/pi)`` [m]."""
        return math.sqrt(self.area / math.pi)

    @property
    def B_xy(self) -> float:
        """Resolved bend rigidity [N m^2]: ``bend_rigidity`` or ``E I`` of the tube."""
        if self.bend_rigidity is not None:
            return self.bend_rigidity
        return self.youngs_modulus * self.second_moment

    @property
    def B_z(self) -> float:
        """Resolved twist rigidity [N m^2]: ``twist_rigidity`` or ``G J`` of the tube."""
        if self.twist_rigidity is not None:
            return self.twist_rigidity
        return self.shear_modulus * self.polar_moment

    @property
    def axial_stiffness(self) -> float:
        """Printed-state ``S_z = E A`` [N]."""
        return self.youngs_modulus * self.area

    @property
    def shear_stiffness(self) -> float:
        """Printed-state ``S_xy = 27/28 G A`` [N]."""
        return ALPHA_C * self.shear_modulus * self.area

    @property
    def mass(self) -> float:
        """Rod mass ``rho A L`` [kg] (printed length)."""
        return self.density * self.area * self.length

    def with_handedness(self, handedness: int) -> RodParams:
        """Copy with ``handedness`` (+1 right, -1 left)."""
        return self.replace(handedness=handedness)


