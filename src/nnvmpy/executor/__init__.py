"""nv.executor: a symbol bound to arrays (MXNet's Executor), and how it is built.

executor.py      Executor: bind-time planning, forward/backward, views, debug_str
arguments.py     what bind is given / what simple_bind allocates (shared_exec, shared_buffer)
node_run.py      one prepared engine push per node
bulk.py          runs of nodes pushed as one engine operation (NNVMPY_EXEC_BULK_EXEC_*)
shared_memory.py blocks borrowed from a shared executor
reshape.py       Executor.reshape
monitor.py       set_monitor_callback
"""

from __future__ import annotations

from .arguments import simple_bind
from .executor import Executor

__all__ = ["Executor", "simple_bind"]
