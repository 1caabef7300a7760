"""Hypothesis profiles for the property tests.

HYPOTHESIS_PROFILE=ci (the default) keeps the suite fast; HYPOTHESIS_PROFILE=campaign runs a
long search (for example before a release, or overnight against a backend).
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=30, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "campaign", max_examples=2000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
