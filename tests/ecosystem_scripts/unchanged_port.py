"""A deliberately broken porter for the ecosystem tests: `unchanged_port.py INPUT OUTPUT` copies the
script unchanged and reports nothing, so its "port" never runs on the IPU."""
import shutil
import sys

shutil.copyfile(sys.argv[1], sys.argv[2])
