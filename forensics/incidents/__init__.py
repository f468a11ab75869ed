"""Stage 4: incidents (process lifetimes), phase timelines, readiness."""
from forensics.incidents.lifetimes import Hit, Incident, IncidentBuilder, PhaseSpan, build_incidents

__all__ = ["Hit", "Incident", "IncidentBuilder", "PhaseSpan", "build_incidents"]
