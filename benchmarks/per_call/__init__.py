"""compare.py's parts; compare.py (in the folder above) is the script to run.

- `settings`: the engines, budgets, warm-ups and where results go;
- `child`: one configuration (model x engine) in its own process: prepares it, then
  times its loads and calls round by round as the parent asks;
- `parent`: starts the children, runs the alternating rounds, pools their figures,
  and runs the C++ per-call runner on the programs they wrote;
- `report`: the tables the run prints, one function a table, and the ratios the JSON keeps.
"""
