"""Fixture MCP servers for the MCP host's integration tests (see knob_server.py and launch.py)."""

from .launch import KNOB_SERVER, knob_server_parameters, knob_stdio_params, run_http_knob_server

__all__ = ["KNOB_SERVER", "knob_server_parameters", "knob_stdio_params", "run_http_knob_server"]
