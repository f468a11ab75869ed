"""Drivers: commands that run the stages over inputs and compare or combine results (no click here)."""
