"""The lean request view: old tool outputs sent as stubs with handles (see lean.py)."""

from .lean import Keeper, LeanView, ViewOutcome, ViewSettings
from .plan import ViewItem, ViewPlan, plan_view

__all__ = ["Keeper", "LeanView", "ViewItem", "ViewOutcome", "ViewPlan", "ViewSettings", "plan_view"]
