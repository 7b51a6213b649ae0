"""The world in the videos, stills and the browser view: obstacles, free objects at their
recorded poses, contact forces as arrows (io/render_world.py, render_world_meshes.py,
view_world.py).

The input is the synthetic robot of ``test_render.py`` (straight rods elongating) with a floor
1 cm below the base, a ball of radius 2 cm beside rod 0 at the height of one of its nodes, and
contact columns of known values: the floor carries the ball (0.2 N up, sticking) and rod 0
pushes it (the force on the rod 0.1 N towards the robot, sliding).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from hsa_elastica.io.render_scene import RobotScene
from hsa_elastica.io.render_world import (
    arrows_at,
    contact_layout,
    force_scale,
    world_of,
)
from hsa_elastica.params import (
    BoxObstacle,
    ContactParams,
    EnvironmentParams,
    ObjectParams,
    PlaneObstacle,
)
from test_render import L, N_ELEM, PARAMS, synthetic_diagnostics  # tests/ is on sys.path

FLOOR_Z = -0.01  # m
BALL_R = 0.02  # m
NODE = 4  # the node of rod 0 the ball touches
N_CONTACTS = 11  # 1 obstacle x (4 rods + platform), then 1 object x (1 obstacle + 4 rods
# + platform)
K_FLOOR_BALL, K_ROD0_BALL = 5, 6


def _env_params() -> object:
    floor = PlaneObstacle(point=(0.0, 0.0, FLOOR_Z), normal=(0.0, 0.0, 1.0))
    ball = ObjectParams(radius=BALL_R, mass=0.02, position=(0.1, 0.0, FLOOR_Z + BALL_R),
                        contact=ContactParams())
    return dataclasses.replace(PARAMS, environment=EnvironmentParams(obstacles=(floor,), objects=(ball,)))


def _rod0_radial() -> np.ndarray:
    a = PARAMS.rod_angle(0)
    return np.array([math.cos(a), math.sin(a), 0.0])


def _ball_centre(df: pd.DataFrame, row: int) -> np.ndarray:
    """Beside node NODE of rod 0, 1 mm off its contact radius, outwards along rod 0's radial."""
    node = np.array([df[f"rod0/position_{a}_{NODE}"][row] for a in "xyz"])
    return node + (BALL_R + 0.008) * _rod0_radial()


def world_frame(n_t: int = 4) -> pd.DataFrame:
    df = synthetic_diagnostics(n_t=n_t)
    extra: dict[str, list[float]] = {}
    for row in range(len(df)):
        c = _ball_centre(df, row)
        for a, v in zip("xyz", c):
            extra.setdefault(f"object0/position_{a}", []).append(float(v))
        for a, v in zip("xyzw", (0.0, 0.0, 0.0, 1.0)):
            extra.setdefault(f"object0/quaternion_{a}", []).append(v)
        for k in range(N_CONTACTS):
            f = np.zeros(3)
            if k == K_FLOOR_BALL:
                f = np.array([0.0, 0.0, 0.2])
            elif k == K_ROD0_BALL:
                f = 0.1 * _rod0_radial()  # the ball pushes the rod outwards... on the rod
            for a, v in zip("xyz", f):
                extra.setdefault(f"sensors/contact_force_{a}_{k}", []).append(float(v))
            extra.setdefault(f"sensors/contact_sliding_{k}", []).append(1.0 if k == K_ROD0_BALL else 0.0)
            extra.setdefault(f"sensors/contact_sticking_{k}", []).append(1.0 if k == K_FLOOR_BALL else 0.0)
    return pd.concat([df, pd.DataFrame(extra)], axis=1)


def test_arrows_at_the_contact_points_show_the_force_on_the_touched_body() -> None:
    df = world_frame()
    world = world_of(df, _env_params())
    assert world is not None and len(world.contacts) == N_CONTACTS
    m_per_n, n_per_cm = force_scale(world)
    # largest force 0.2 N drawn at most 0.3 rod lengths (30 mm): 10 mm = 0.0667 N -> 0.1 N
    assert n_per_cm == pytest.approx(0.1) and m_per_n == pytest.approx(0.1)
    arrows = arrows_at(world, 2, m_per_n, 1e-6)
    (start, vec), = arrows[False]  # the floor under the ball: sticking, from its support point
    centre = _ball_centre(df, 2)
    np.testing.assert_allclose(start, [centre[0], centre[1], FLOOR_Z], atol=1e-12)
    np.testing.assert_allclose(vec, [0.0, 0.0, 0.02], atol=1e-12)  # 0.2 N at 0.1 m/N
    (start, vec), = arrows[True]  # rod 0 on the ball: sliding, the force ON THE BALL, drawn
    np.testing.assert_allclose(start, centre - BALL_R * _rod0_radial(), atol=1e-12)  # inside it
    np.testing.assert_allclose(vec, -0.01 * _rod0_radial(), atol=1e-12)


def test_contact_layout_is_the_order_of_the_builders_contacts_and_objects_are_recorded() -> None:
    from hsa_elastica.physics.contact import BodyContact, RodContact
    from hsa_elastica.physics.object_contact import ObjectContact
    from hsa_elastica.robots.builders import build_robot

    params = _env_params()
    robot = build_robot(params, [0.0] * 4, record=True)
    robot.run(0.02)
    layout = contact_layout(4, params.environment.obstacles, 1)
    assert len(layout) == len(robot.contacts) == N_CONTACTS
    for touch, ref in zip(layout, robot.contacts):
        inst = ref.instance
        if touch.rod_on_object and touch.rod == -1:  # the platform's rims on the object
            assert isinstance(inst, ObjectContact) and ref.system is robot.platform
        elif touch.rod_on_object:
            assert isinstance(inst, ObjectContact)
            assert np.shares_memory(inst._source, robot.rods[touch.rod].position_collection)
        elif touch.rod == -2:
            assert isinstance(inst, BodyContact) and inst.sphere_radius == BALL_R
        elif touch.rod == -1:
            assert isinstance(inst, BodyContact) and inst.sphere_radius == 0.0
        else:
            assert isinstance(inst, RodContact)
            assert np.shares_memory(inst._source, robot.rods[touch.rod].position_collection)
    # the object's pose is recorded: the sphere's own state at the last sample
    df = robot.diagnostics()
    body = robot.contacts[K_ROD0_BALL].instance.body
    np.testing.assert_array_equal([df[f"object0/position_{a}"].iloc[-1] for a in "xyz"],
                                  body.position_collection[:, 0])
    assert df["object0/quaternion_w"].iloc[-1] == pytest.approx(1.0, abs=1e-9)  # resting, unturned


def _magenta(img: np.ndarray) -> np.ndarray:
    """Pixels of the object's magenta (#e7298a, drawn translucent and shaded): red and blue
    well above green; not the rods' orange (blue lowest) or teal (red lowest), not white."""
    r, g, b = (img[..., c].astype(int) for c in range(3))
    return (r - g > 80) & (b - g > 40)


def _display_xy(scene: RobotScene, point: np.ndarray) -> np.ndarray:
    ren = scene.plotter.renderer
    ren.SetWorldPoint(float(point[0]), float(point[1]), float(point[2]), 1.0)
    ren.WorldToDisplay()
    return np.array(ren.GetDisplayPoint()[:2])


def test_a_still_shows_the_object_where_it_was_recorded() -> None:
    df = world_frame()
    w, h = 480, 360
    with RobotScene(df, _env_params(), window_size=(w, h), show_frames=False) as scene:
        assert "object" in scene.legend_entries and "obstacle" in scene.legend_entries
        assert "force, sticking: 10 mm = 0.1 N" in scene.legend_entries
        for row in (0, len(df) - 1):
            scene.update(row)
            img = scene.image()
            mask = _magenta(img)
            x, y = _display_xy(scene, _ball_centre(df, row))  # VTK's projection, y up
            px_r = abs(_display_xy(scene, _ball_centre(df, row) + [0, 0, BALL_R])[1] - y)
            ys, xs = np.nonzero(mask)
            yu = h - 1 - ys  # VTK's y up
            near = np.hypot(xs - x, yu - y) < 1.5 * px_r  # (the legend's swatch is far away)
            # the ball's disc (~20 px radius here) is drawn there: most of its area in its
            # colour (shading darkens its lower rim), centred across on the recorded centre
            # within a third of its radius
            assert near.sum() > 0.5 * math.pi * px_r**2, (near.sum(), px_r)
            assert abs(xs[near].mean() - x) < 0.35 * px_r, (xs[near].mean(), x, px_r)
            # the recorded centre is inside the drawn disc, and 1.3 radii aside on either
            # side is not (the lit upper half biases the centroid up: not tested)
            i, j = h - 1 - int(round(y)), int(round(x))
            assert mask[i - 2 : i + 3, j - 2 : j + 3].all()
            for dx in (-1.3 * px_r, 1.3 * px_r):
                assert not mask[i, int(round(x + dx))]


def test_a_run_without_environment_renders_as_before() -> None:
    df = world_frame(n_t=2)
    with RobotScene(df, PARAMS, window_size=(320, 240), show_frames=False) as scene:
        assert scene.world_actors is None
        img_extra = scene.image()
        entries = scene.legend_entries
    plain = synthetic_diagnostics(n_t=2)
    with RobotScene(plain, PARAMS, window_size=(320, 240), show_frames=False) as scene:
        img_plain = scene.image()
        assert scene.legend_entries == entries == ["right-handed", "left-handed"]
    # the object's and contacts' columns without an environment in the parameters: ignored
    np.testing.assert_array_equal(img_extra, img_plain)


def test_the_view_draws_the_object_obstacle_and_forces(tmp_path) -> None:
    from hsa_elastica.io.rundir import save_run
    from hsa_elastica.io.view import view_figure, write_view_html

    df = world_frame()
    run = save_run(tmp_path / "run", df, _env_params(), {"sim_time_s": 1.0})
    fig = view_figure(run)
    names = [t.name for t in fig.data]
    obj = fig.data[names.index("object")]
    centre = _ball_centre(df, 0) * 1e3  # mm
    np.testing.assert_allclose([np.mean(obj.x), np.mean(obj.y)], centre[:2], atol=0.05 * BALL_R * 1e3)
    assert "obstacle" in names and "force, sliding" in names
    stick = fig.data[names.index("force, sticking: 10 mm = 0.1 N")]
    assert stick.z[0] == pytest.approx(FLOOR_Z * 1e3)  # the arrow starts on the floor
    last = fig.frames[-1].data[names.index("object")]  # the frames move the object
    np.testing.assert_allclose(np.mean(last.z), _ball_centre(df, len(df) - 1)[2] * 1e3, atol=1.0)
    page = write_view_html(run, tmp_path / "v.html").read_text()
    assert '"name":"object"' in page and '"name":"obstacle"' in page


def test_a_plain_run_has_no_world_in_the_view(tmp_path) -> None:
    from hsa_elastica.io.rundir import save_run
    from hsa_elastica.io.view import view_figure

    run = save_run(tmp_path / "run", synthetic_diagnostics(n_t=3), PARAMS, {"sim_time_s": 1.0})
    names = {t.name for t in view_figure(run).data}
    assert not names & {"object", "obstacle", "force, sliding"}


def test_node_count_of_the_synthetic_rods() -> None:  # the fixture's assumption
    assert N_ELEM >= NODE + 2 and L > 0


def test_a_box_obstacle_is_drawn_at_its_corners(tmp_path) -> None:
    """A box in place of the floor: the view's obstacle mesh has the box's 8 corners (from its
    centre, axes and edge lengths by hand) and 12 triangles; the still draws it too; the
    object-on-box arrow is placed with the box's signed distance."""
    from hsa_elastica.io.rundir import save_run
    from hsa_elastica.io.view import view_figure

    c, s = math.cos(0.3), math.sin(0.3)
    box = BoxObstacle(center=(0.01, 0.0, FLOOR_Z - 0.01), size=(0.4, 0.3, 0.02),
                      x_axis=(c, s, 0.0))  # its top under the robot and the ball
    ball = ObjectParams(radius=BALL_R, mass=0.02, position=(0.1, 0.0, FLOOR_Z + BALL_R))
    params = dataclasses.replace(PARAMS, environment=EnvironmentParams(obstacles=(box,),
                                                                       objects=(ball,)))
    df = world_frame(n_t=2)
    fig = view_figure(save_run(tmp_path / "run", df, params, {"sim_time_s": 1.0}))
    names = [t.name for t in fig.data]
    mesh = fig.data[names.index("obstacle")]
    drawn = np.column_stack([mesh.x, mesh.y, mesh.z]) / 1e3
    axes = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    corners = np.array([np.array(box.center) + (np.array(sg) * 0.5 * np.array(box.size)) @ axes
                        for sg in itertools.product((-1, 1), repeat=3)])
    assert len(drawn) == 8 and len(mesh.i) == 12
    for corner in corners:  # each corner drawn (any order)
        assert np.linalg.norm(drawn - corner, axis=1).min() < 1e-9
    stick = fig.data[names.index("force, sticking: 10 mm = 0.1 N")]
    assert stick.z[0] == pytest.approx(FLOOR_Z * 1e3)  # the arrow starts on the box's top
    with RobotScene(df, params, window_size=(320, 240), show_frames=False) as scene:
        assert "obstacle" in scene.legend_entries
        scene.update(1)
        assert scene.image().shape == (240, 320, 3)
