"""The lean request view: old tool outputs sent as stubs with handles (see lean.py)."""

from .lean import LeanView, StoreHandles, ViewOutcome, ViewSettings
from .plan import ViewItem, ViewPlan, plan_view

__all__ = ["StoreHandles", "LeanView", "ViewItem", "ViewOutcome", "ViewPlan", "ViewSettings", "plan_view"]
