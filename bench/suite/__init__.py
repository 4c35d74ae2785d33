"""`make bench`: run_all.py runs every section, bench_table.py prints the one table."""
