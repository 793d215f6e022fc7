"""A slide's rules: it is read, then left; the defaults of `StepRules`. Pure."""

from __future__ import annotations

from gradtutor.lessons.model import Slide
from gradtutor.records import record
from gradtutor.walk.rules import StepRules


@record
class SlideView:
    """A slide has nothing to remember: it is read, then left."""

    @property
    def busy(self) -> bool:
        return False


class SlideRules(StepRules[Slide, SlideView]):
    def open(self, step: Slide) -> SlideView:
        return SlideView()


RULES = SlideRules()
