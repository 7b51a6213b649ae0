"""An HSA rod in your own PyElastica simulator: the example of docs/python.md, complete.

A right-handed rod of the paper robot (Section II-E), base turned to 90 degrees by a motor,
distal twist held: the auxetic coupling (Eq. 2-5) makes it settle at ``L + C_eps * phi``.
Run: ``python docs/examples/own_simulator.py`` (tests/test_own_simulator_example.py does).
"""

import numpy as np
from elastica import AnalyticalLinearDamper, PositionVerlet, integrate
from hsa_elastica import (HSASimulator, RodParams, make_hsa_rod, AuxeticCoupling, MotorAngleBC,
                          DistalTwistLockBC, KelvinVoigtDamping, Ramp)

p = RodParams()                                     # paper robot rod, SI units
phi, dt = np.pi / 2, 3e-5                           # motor angle [rad], time step [s]
sim = HSASimulator()
rod = make_hsa_rod(p, base_position=np.zeros(3), normal=np.array([1.0, 0.0, 0.0]))
sim.append(rod)
sim.add_forcing_to(rod).using(AuxeticCoupling, **AuxeticCoupling.params_kwargs(p))  # every law of p
sim.constrain(rod).using(MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,),
                         angle=Ramp(target=phi, duration=0.5))
sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
sim.dampen(rod).using(KelvinVoigtDamping, tau_axial=p.retardation_time_axial,     # TPU material
                      tau_shear=p.retardation_time_shear, tau_bend=p.retardation_time_bend,
                      tau_twist=p.retardation_time_twist, time_step=dt)
sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=50.0, time_step=dt)  # settle fast
sim.finalize()
integrate(PositionVerlet(), sim, final_time=1.5, n_steps=50_000, progress_bar=False)  # 1.5 s / dt

elongation = rod.position_collection[2, -1] - rod.position_collection[2, 0] - p.length  # rod along +z
print(f"elongation = {elongation * 1e3:.6f} mm (closed form C_eps * phi = {p.C_eps * phi * 1e3:.6f} mm)")
