"""Array layout of a compiled HSA model: the state (PyElastica memory-block views) and one
table per physical law, as consumed by :mod:`hsa_elastica.physics.forces`.

A *program* is an ``(n, 2)`` int64 array of rows ``(operator code, row in that operator's
table)`` listing the operators in the order PyElastica 1.0 calls them; the codes are the
``OP_*`` constants below.  Tables are NamedTuples of arrays (numba passes them by reference).
Built by :mod:`hsa_elastica.engines.compile`; read by the fused stepper and the static solver.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "RodBlockArrays",
    "BodyBlockArrays",
    "CouplingTable",
    "TwistRow",
    "PlayRow",
    "RestLengthRow",
    "StiffnessRow",
    "JointTable",
    "MotorTable",
    "RodDamperTable",
    "BodyDamperTable",
    "GravityTable",
    "MaterialDampingTable",
    "EndTable",
    "LoadTable",
    "CompressionTable",
    "ContactTable",
    "CONTACT_PARAMS",
    "ROD_ROD",
    "ROD_FIELDS",
    "ForcingTables",
    "ModelTables",
    "MotorSchedule",
    "BLOCK_CONSTANTS",
    "LAW_MEMORY",
    "OUTPUTS",
    "WORKSPACE",
    "Pose",
    "State",
    "bind",
]

# --------------------------------------------------------------------------------------------
# operator codes of the programs (one row = (code, index into the operator's table))
# --------------------------------------------------------------------------------------------
OP_NOOP = 0
OP_COUPLING = 1
OP_JOINT_FORCE = 2
OP_JOINT_TORQUE = 3
OP_GRAVITY_ROD = 4
OP_GRAVITY_BODY = 5
OP_MOTOR = 6
OP_DAMP_ROD = 7
OP_DAMP_BODY = 8
OP_MATERIAL_DAMPING = 9
OP_END = 10  # rod-end constraint (EndTable row)
OP_LOAD = 11  # point force / axial torque on a rod (LoadTable row)
OP_COMPRESSION = 12  # compression-softening axial law (CompressionTable row)
OP_COUPLING_TORQUE = 13  # the passive model's conjugate couple and exact-gradient rod forces
OP_MOUNT_REACTION = 14  # load of a body-mounted rod base handed to the body (MotorTable row)
OP_CONTACT = 15  # contact of a rod's nodes or a body's points with an obstacle (ContactTable row)
OP_LAW = 16  # a law registered in physics/compiled_laws (ModelTables.laws entry)

#: the ``ContactTable.ids`` system kind of a rod against a rod (physics/rod_contact.py)
ROD_ROD = 3

#: kinds of rod-end constraints (``EndTable.kind``)
END_FIXED = 0  # node and element held (PyElastica's FixedConstraint)
END_TWIST_LOCK = 1  # element may tilt, not twist (DistalTwistLockBC)
END_FREE_TWIST = 2  # node held, element turns about its initial axis only (FreeTwistBC)

#: status codes returned by :func:`advance`
STATUS_OK = 0
STATUS_STIFFNESS = 1


# --------------------------------------------------------------------------------------------
# array bundles (numba accepts NamedTuples of arrays)
# --------------------------------------------------------------------------------------------
class RodBlockArrays(NamedTuple):
    """Views of the arrays of PyElastica's ``MemoryBlockCosseratRod`` (all rods, ghosts)."""

    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    omega: NDArray[np.float64]
    director: NDArray[np.float64]
    v_w: NDArray[np.float64]
    dvdt_dwdt: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    alpha: NDArray[np.float64]
    external_forces: NDArray[np.float64]
    external_torques: NDArray[np.float64]
    mass: NDArray[np.float64]
    volume: NDArray[np.float64]
    lengths: NDArray[np.float64]
    tangents: NDArray[np.float64]
    radius: NDArray[np.float64]
    rest_lengths: NDArray[np.float64]
    rest_voronoi_lengths: NDArray[np.float64]
    dilatation: NDArray[np.float64]
    voronoi_dilatation: NDArray[np.float64]
    sigma: NDArray[np.float64]
    rest_sigma: NDArray[np.float64]
    shear_matrix: NDArray[np.float64]
    internal_stress: NDArray[np.float64]
    internal_forces: NDArray[np.float64]
    ghost_elems_idx: NDArray[Any]
    bend_matrix: NDArray[np.float64]
    rest_kappa: NDArray[np.float64]
    kappa: NDArray[np.float64]
    mass_second_moment_of_inertia: NDArray[np.float64]
    inv_mass_second_moment_of_inertia: NDArray[np.float64]
    internal_couple: NDArray[np.float64]
    dilatation_rate: NDArray[np.float64]
    internal_torques: NDArray[np.float64]
    ghost_voronoi_idx: NDArray[Any]



ROD_FIELDS = {
    "position": "position_collection",
    "velocity": "velocity_collection",
    "omega": "omega_collection",
    "director": "director_collection",
    "v_w": "v_w_collection",
    "dvdt_dwdt": "dvdt_dwdt_collection",
    "acceleration": "acceleration_collection",
    "alpha": "alpha_collection",
}



class BodyBlockArrays(NamedTuple):
    """Views of the arrays of PyElastica's ``MemoryBlockRigidBody``."""

    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    omega: NDArray[np.float64]
    director: NDArray[np.float64]
    v_w: NDArray[np.float64]
    dvdt_dwdt: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    alpha: NDArray[np.float64]
    external_forces: NDArray[np.float64]
    external_torques: NDArray[np.float64]
    mass: NDArray[np.float64]
    mass_second_moment_of_inertia: NDArray[np.float64]
    inv_mass_second_moment_of_inertia: NDArray[np.float64]


class CouplingTable(NamedTuple):
    """Parameters and state of the auxetic couplings (one row per coupling)."""

    elem_start: NDArray[np.int64]  # first element of the rod in the block
    vor_start: NDArray[np.int64]  # first Voronoi entry of the rod in the block
    handedness: NDArray[np.float64]
    C_eps: NDArray[np.float64]  # m/rad
    C_eps2: NDArray[np.float64]  # m^2/rad^2, optional quadratic rest-length law (0 = paper)
    eps_min: NDArray[np.float64]
    eps_max: NDArray[np.float64]
    kappa_min: NDArray[np.float64]  # rad/m, clip range of the stiffness law
    kappa_max: NDArray[np.float64]
    area: NDArray[np.float64]  # m^2
    E_slope: NDArray[np.float64]
    G_slope: NDArray[np.float64]
    bend_slope: NDArray[np.float64]
    twist_slope: NDArray[np.float64]
    E_quad: NDArray[np.float64]  # Pa m^2/rad^2, optional quadratic terms (0 = paper's Eq. 5)
    twist_quad: NDArray[np.float64]  # N m^2 m^2/rad^2
    filter_time: NDArray[np.float64]  # s, 0 = off
    creep_fraction: NDArray[np.float64]  # -, creep of the rest strain after a long hold (0 = off)
    creep_time: NDArray[np.float64]  # s, its time constant (0 = frozen: the static solver)
    printed_lengths: NDArray[np.float64]  # (n, ne)
    printed_voronoi: NDArray[np.float64]  # (n, nv)
    printed_shear: NDArray[np.float64]  # (n, 3, 3, ne)
    printed_bend: NDArray[np.float64]  # (n, 3, 3, nv)
    kappa_vor_raw: NDArray[np.float64]  # (n, nv) state / work
    kappa_vor: NDArray[np.float64]
    kappa_vor_clipped: NDArray[np.float64]
    kappa_elem: NDArray[np.float64]  # (n, ne)
    kappa_elem_clipped: NDArray[np.float64]
    eps: NDArray[np.float64]
    last_time: NDArray[np.float64]
    initialized: NDArray[np.int64]
    couple: NDArray[np.float64]  # (n, nv) N m, reciprocal twist couple of the step (work)
    node_start: NDArray[np.int64]  # first node of the rod in the block
    clip_width: NDArray[np.float64]  # blend width of the rounded clip (0 = the paper's clip)
    work: NDArray[np.float64]  # (n, 3, ne) scratch of the passive model
    eps_creep: NDArray[np.float64]  # (n, ne) state: creep part of the rest strain [-]
    creep_last: NDArray[np.float64]  # (n,) state: time [s] of its last update (-inf: none yet)
    play_width: NDArray[np.float64]  # rad/m, half-width r of the hysteresis play (physics/hysteresis.py)
    play_weight: NDArray[np.float64]  # -, its weight w (0 = off)
    play_frozen: NDArray[np.int64]  # 1: the play memory is a given state (the static solver)
    play: NDArray[np.float64]  # (n, ne) state: the play's memory m [rad/m]
    play_last: NDArray[np.float64]  # (n,) state: time [s] of its last evaluation (-inf: none yet)
    play_trial: NDArray[np.float64]  # (n, 2 ne) state: the play's branch of this time, then its
    # output at the latest evaluation [rad/m] (physics/hysteresis.advance_play)



# One row of the coupling table as the laws' loops read it: views of the row's arrays and its
# scalars, taken from the table at the top of a kernel (``auxetic_law.rest_length_row`` /
# ``stiffness_row``).  A kernel that still uses the 45-array table after a loop pays a
# reference count on each of its arrays per call (numba prunes the counts only where the
# table's last use comes before the loops): 0.5 us per coupling row, measured.


class TwistRow(NamedTuple):
    """The twist strain of one coupling row (Eq. 3-4): its arrays [rad/m] and constants."""

    kappa_vor_raw: NDArray[np.float64]  # (nv,) unfiltered strain (with the twist filter)
    kappa_vor: NDArray[np.float64]  # (nv,)
    kappa_vor_clipped: NDArray[np.float64]  # (nv,)
    kappa_elem: NDArray[np.float64]  # (ne,)
    kappa_elem_clipped: NDArray[np.float64]  # (ne,)
    printed_voronoi: NDArray[np.float64]  # (nv,) m
    handedness: float
    kappa_min: float  # rad/m, clip range of the stiffness law
    kappa_max: float


class PlayRow(NamedTuple):
    """The hysteresis play of one coupling row (``physics/hysteresis.py``)."""

    memory: NDArray[np.float64]  # (ne,) the play's memory m [rad/m]
    trial: NDArray[np.float64]  # (2 ne,) F of this time, then the output at the latest evaluation
    width: float  # rad/m
    weight: float  # -, 0 = off
    frozen: int  # 1: the memory is a given state (the static solver)
    clock: int  # what this evaluation does with the arrays (hysteresis.play_clock)


class RestLengthRow(NamedTuple):
    """The rest-length law of one coupling row (Eq. 2-3, the creep, the play)."""

    eps: NDArray[np.float64]  # (ne,) out: the law's instantaneous strain [-]
    printed_lengths: NDArray[np.float64]  # (ne,) m
    eps_creep: NDArray[np.float64]  # (ne,) state: creep part of the rest strain [-]
    law: tuple[float, float, float, float, float, float, float]  # auxetic_law.rest_law
    creep_fraction: float  # -, 0 = off
    creep_blend: float  # -, this evaluation's creep blend (auxetic_law.creep_blend)
    play: PlayRow


class StiffnessRow(NamedTuple):
    """The stiffness law of one coupling row (Eq. 5) and the printed geometry it scales."""

    area: float  # m^2
    E_slope: float
    G_slope: float
    bend_slope: float
    twist_slope: float
    E_quad: float
    twist_quad: float
    printed_shear: NDArray[np.float64]  # (3, 3, ne) N
    printed_bend: NDArray[np.float64]  # (3, 3, nv) N m^2
    printed_voronoi: NDArray[np.float64]  # (nv,) m

class JointTable(NamedTuple):
    node: NDArray[np.int64]  # rod node index in the block
    element: NDArray[np.int64]  # rod element index in the block
    body: NDArray[np.int64]  # body index in the rigid-body block
    attachment: NDArray[np.float64]  # (n, 3) m, body frame
    k_F: NDArray[np.float64]
    nu_F: NDArray[np.float64]
    k_tau: NDArray[np.float64]
    nu_tau: NDArray[np.float64]
    rest_orientation: NDArray[np.float64]  # (n, 3, 3), set at the first call
    initialized: NDArray[np.int64]
    # motor mounts (MotorMount / TwistMount rows): column of the motor angle (or torque) in the engine's angle array,
    # -1 for a plain PlatformJoint; rest orientation at motor angle 0, set at the first call
    angle_col: NDArray[np.int64]
    base_orientation: NDArray[np.float64]  # (n, 3, 3)
    free_twist: NDArray[np.int64]  # 1: TwistMount, the angle column holds its torque [N m]


class MotorTable(NamedTuple):
    # rows: MotorAngleBC (body -1: held in the lab) and the rigid motor mounts
    # (MotorMountBC / TwistMountBC: held relative to rigid body ``body``)
    node: NDArray[np.int64]
    element: NDArray[np.int64]
    fixed_position: NDArray[np.float64]  # (n, 3) lab rows: the base node [m]
    reference_director: NDArray[np.float64]  # (n, 3, 3) lab: Q_e0; mounts: Q_e0 Q_b0^T
    has_rate: NDArray[np.int64]
    work: NDArray[np.float64]  # (3, 3)
    body: NDArray[np.int64]  # (n,) rigid body of a mount, -1 for the lab
    offset: NDArray[np.float64]  # (n, 3) mounts: base node in the body frame [m]
    free_twist: NDArray[np.int64]  # (n,) 1: TwistMountBC (the angle column holds its torque)
    mount_work: NDArray[np.float64]  # (3, 3, 3) scratch of the mount kernels


class RodDamperTable(NamedTuple):
    node_start: NDArray[np.int64]
    elem_start: NDArray[np.int64]
    translational: NDArray[np.float64]  # (n, n_nodes) factor per step
    rotational: NDArray[np.float64]  # (n, 3, n_elems) factor (per step, ** dilatation if power)
    power: NDArray[np.int64]


class BodyDamperTable(NamedTuple):
    body: NDArray[np.int64]
    translational: NDArray[np.float64]
    rotational: NDArray[np.float64]


class GravityTable(NamedTuple):
    start: NDArray[np.int64]  # first node (rods) / body index
    size: NDArray[np.int64]  # number of nodes / bodies
    acceleration: NDArray[np.float64]  # (n, 3) m/s^2



class MaterialDampingTable(NamedTuple):
    """Kelvin-Voigt damping of rods (one row per rod; physics/material_damping.py)."""

    node_start: NDArray[np.int64]  # first node of the rod in the block
    elem_start: NDArray[np.int64]  # first element of the rod in the block
    vor_start: NDArray[np.int64]  # first Voronoi entry of the rod in the block
    n_elems: NDArray[np.int64]
    tau: NDArray[np.float64]  # (n, 4) s: shear, axial, bend, twist
    dt: NDArray[np.float64]  # s, the time step of the semi-implicit update
    hold: NDArray[np.int64]  # (n, 2) base / tip node and element left to a boundary condition
    work: NDArray[np.float64]  # (n, WORK_ROWS, max nodes) workspace


class EndTable(NamedTuple):
    """Rod-end constraints other than the motors (one row per constraint; ``END_*`` kinds).

    ``END_FIXED``: node ``node`` at ``position`` and element ``element`` at ``director`` (a
    negative ``node`` / ``element`` is not held); ``END_TWIST_LOCK``: the element's director
    is its swing part relative to ``director`` (no twist); ``END_FREE_TWIST``: node held at
    ``position``, the element's director is ``director`` turned about its own d3.
    """

    kind: NDArray[np.int64]
    node: NDArray[np.int64]  # node index in the block (-1: none)
    element: NDArray[np.int64]  # element index in the block (-1: none)
    position: NDArray[np.float64]  # (n, 3) m
    director: NDArray[np.float64]  # (n, 3, 3) reference / held director
    work: NDArray[np.float64]  # (3, 3)


#: columns of ``ContactTable.params``
CONTACT_PARAMS = 21


class ContactTable(NamedTuple):
    """Contacts with obstacles (physics/contact.py, physics/object_contact.py,
    docs/contact.md), one row per ``RodContact`` (nodes of a rod and a fixed obstacle),
    ``BodyContact`` (points fixed on a rigid body, or a sphere's support point, and a fixed
    obstacle) or ``ObjectContact`` (nodes of a rod, or a body's points, and the obstacle a
    free body carries).

    Four arrays (each array of a record costs a reference count where a kernel takes it, so
    the row's fields are columns): ``ids`` (system: the rod's first contact node in the
    block or the body's index; the system's kind: 0 a rod's nodes, 1 a body's points, 2 a
    sphere's support point; the number of points m; the obstacle's kind; the index of the
    body carrying the obstacle, -1 for a fixed one), ``params`` (the obstacle's origin,
    direction, radius and length as in ``contact_laws.ObstacleGeometry`` -- origin and
    direction rewritten from the carrying body's pose at every evaluation --, then the law
    ``contact_laws.ContactLaw``: k, l, zeta, mu, v_s, then a sphere's radius), ``points`` (per
    point: a body point in the body frame, its lab position and velocity (work; a rod node's
    velocity relative to an object), the contact radius, the mass (reduced with an object's))
    and ``output`` (per point what the force kernel wrote last: force, gap, tangential speed;
    the operator's sensor arrays are views of it).

    A ``RodRodContact`` row (system kind :data:`ROD_ROD`) has its own layout: ``ids`` = (rod
    A's first node in the block, ``ROD_ROD``, A's node count n_a, rod B's first node, B's node
    count n_b); ``params[8:13]`` the law; ``points`` rows 0-3: A's element radii (n_a - 1),
    B's element radii, A's element masses, B's element masses; ``output``: the force on A's
    nodes (rows 0-2, n_a), per element of A its smallest gap to B (row 3) and the tangential
    speed there (row 4).  The law couples every node of A with every node of B (a tangent's
    scatter: the 12 x 12 block of each element pair in contact,
    ``rod_contact_laws.segment_pair_tangent``, rows and columns A's nodes i, i + 1, B's j,
    j + 1)."""

    ids: NDArray[np.int64]  # (n, 5): system, system kind, m, obstacle kind, object body
    params: NDArray[np.float64]  # (n, CONTACT_PARAMS = 21): origin (3) [m], direction (3),
    # radius [m], length [m], k [N/m], l [m], zeta, mu, v_s [m/s], sphere radius [m], rolling
    # resistance, a box's x axis (3) and inner half edges (3) [m]
    points: NDArray[np.float64]  # (n, 11, width): local (3) [m], position (3) [m],
    # velocity (3) [m/s], radius [m], mass [kg]
    output: NDArray[np.float64]  # (n, 5, width): force (3) [N], gap [m], slip [m/s]


class LoadTable(NamedTuple):
    """Point forces [N, lab frame] on rod nodes and torques [N m, local z] on rod elements,
    scaled by ``min(1, t / ramp)`` (``ramp`` = 0: constant), one row per load."""

    node: NDArray[np.int64]  # node index in the block (-1: no force)
    force: NDArray[np.float64]  # (n, 3) N
    element: NDArray[np.int64]  # element index in the block (-1: no torque)
    torque: NDArray[np.float64]  # (n,) N m about the element's d3
    ramp: NDArray[np.float64]  # (n,) s


class CompressionTable(NamedTuple):
    """Compression-softening axial law of rods (physics/compression_law.py), one row per rod."""

    node_start: NDArray[np.int64]
    elem_start: NDArray[np.int64]
    vor_start: NDArray[np.int64]
    n_elems: NDArray[np.int64]
    handedness: NDArray[np.float64]
    kappa_min: NDArray[np.float64]  # rad/m
    kappa_max: NDArray[np.float64]
    ratio: NDArray[np.float64]  # r_c at zero twist [-]
    slope: NDArray[np.float64]  # m/rad
    printed_voronoi: NDArray[np.float64]  # (n, max nv)
    work: NDArray[np.float64]  # (n, 5, max ne) workspace: kv, ke, ke clipped, sigma_z, factor


class ForcingTables(NamedTuple):
    """The forcings of the synchronize program other than the joints and couplings: gravity on
    the rods and on the bodies, point loads, the compression law and the contacts with
    obstacles (one argument of :func:`~hsa_elastica.physics.forces.evaluate_forces`)."""

    rod_gravity: GravityTable
    body_gravity: GravityTable
    loads: LoadTable
    compression: CompressionTable
    contacts: ContactTable
    laws: tuple[Any, ...]  # the tables of the registered compiled laws (physics/compiled_laws)


class ModelTables(NamedTuple):
    """Every law table and operator program of a compiled model: the one record the engines'
    kernels take for "the model" (:func:`hsa_elastica.physics.forces.evaluate_forces`, the
    fused stepper, the static solver's residual and Jacobian)."""

    couplings: CouplingTable
    joints: JointTable
    motors: MotorTable
    rod_dampers: RodDamperTable
    body_dampers: BodyDamperTable
    rod_gravity: GravityTable
    body_gravity: GravityTable
    material: MaterialDampingTable
    ends: EndTable
    loads: LoadTable
    compression: CompressionTable
    contacts: ContactTable
    laws: tuple[Any, ...]
    sync_program: NDArray[np.int64]
    values_program: NDArray[np.int64]
    rates_program: NDArray[np.int64]


class MotorSchedule(NamedTuple):
    """Motor commands of the steps of one fused call: ``angle_half[s, i]`` /
    ``angle_full[s, i]`` motor ``i``'s angle [rad] (or a twist mount's torque [N m]) at the
    mid-step / end-of-step times of step ``s``, ``rate_half[s, i]`` its rate [rad/s] at
    mid-step."""

    angle_half: NDArray[np.float64]
    angle_full: NDArray[np.float64]
    rate_half: NDArray[np.float64]


# --------------------------------------------------------------------------------------------
# state: what the executors advance, apart from the parameter tables
# --------------------------------------------------------------------------------------------
#: the arrays of a law table that change while stepping: the law's memory (part of a State)
LAW_MEMORY: dict[str, tuple[str, ...]] = {
    "couplings": ("kappa_vor_raw", "kappa_vor", "kappa_vor_clipped", "kappa_elem",
                  "kappa_elem_clipped", "eps", "last_time", "initialized", "couple",
                  "eps_creep", "creep_last", "play", "play_last", "play_trial"),
    "joints": ("rest_orientation", "initialized", "base_orientation"),
}
#: the scratch arrays of the law tables: written before they are read, never part of a State
WORKSPACE: dict[str, tuple[str, ...]] = {
    "couplings": ("work",), "motors": ("work", "mount_work"), "material": ("work",),
    "ends": ("work",), "compression": ("work",),
}
#: the fields of the memory blocks fixed when the model is built (rest strains, masses and
#: inertias): no executor writes them, so a record of an instant need not copy them
BLOCK_CONSTANTS: dict[str, tuple[str, ...]] = {
    "rod": ("mass", "mass_second_moment_of_inertia", "inv_mass_second_moment_of_inertia",
            "rest_sigma", "rest_kappa"),
    "body": ("mass", "mass_second_moment_of_inertia", "inv_mass_second_moment_of_inertia"),
}
#: the arrays a force evaluation writes for readers outside the step (the contacts' sensor
#: arrays are views of them): not needed by the next step, but part of a record of an instant
OUTPUTS: dict[str, tuple[str, ...]] = {"contacts": ("output",)}


class Pose(NamedTuple):
    """Positions [m] and directors of the rods and bodies: the unknowns of a static solve
    (velocities zero) and the saved state of a static result."""

    rod_position: NDArray[np.float64]
    rod_director: NDArray[np.float64]
    body_position: NDArray[np.float64]
    body_director: NDArray[np.float64]

    def copy(self) -> "Pose":
        return Pose(*[a.copy() for a in self])


class State(NamedTuple):
    """What an executor advances: the rod and body arrays (of a compiled model's own state:
    views of PyElastica's memory blocks) and the laws' memories (``memory[law][field]``, the
    :data:`LAW_MEMORY` arrays).  Executors take the model's tables bound to it (:func:`bind`)."""

    rod: RodBlockArrays
    body: BodyBlockArrays
    memory: dict[str, dict[str, NDArray[Any]]]

    def copy(self) -> "State":
        """A complete copy owning all its arrays."""
        return State(RodBlockArrays(*[a.copy() for a in self.rod]),
                     BodyBlockArrays(*[a.copy() for a in self.body]),
                     {law: {f: a.copy() for f, a in m.items()} for law, m in self.memory.items()})

    @property
    def pose(self) -> Pose:
        return Pose(self.rod.position, self.rod.director, self.body.position, self.body.director)

    def set_pose(self, pose: Pose | tuple[NDArray[np.float64], ...]) -> None:
        for dst, src in zip(self.pose, pose):
            dst[:] = src


def bind(tables: ModelTables, state: State, *, own_workspace: bool = False) -> ModelTables:
    """``tables`` with ``state``'s memory arrays (and, with ``own_workspace``, new scratch
    arrays): the record the kernels take to advance ``state``."""
    laws = {}
    for law in set(LAW_MEMORY) | set(WORKSPACE):
        table, own = getattr(tables, law), WORKSPACE.get(law, ()) if own_workspace else ()
        laws[law] = table._replace(**state.memory.get(law, {}),
                                   **{f: np.zeros_like(getattr(table, f)) for f in own})
    return tables._replace(**laws)
