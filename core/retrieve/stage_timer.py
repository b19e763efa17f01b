"""Wall-clock timing of pipeline stages: moved to `core.observe.stage_timer` (also spans and
metrics); kept here so existing imports keep working."""

from core.observe.stage_timer import StageTimer

__all__ = ["StageTimer"]
