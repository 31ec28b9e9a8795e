"""``picosim://NAME``: a simulated Pico co-processor (companion.hardware.pico_sim)."""

from companion.hardware.pico_sim import Serial

__all__ = ["Serial"]
