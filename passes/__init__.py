"""Pipeline adapters: run a program through a system under test and capture its decisions.

Each adapter is a plain callable ``(Program, inputs, device, options) -> Execution``.
"""
