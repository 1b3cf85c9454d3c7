#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of the repository carries its licence as an SPDX line.

  scripts/check_spdx.py [--fix] [ROOT]

Checks the files git tracks (C, C++, CUDA, CMake, Python, shell, .map and .ci scripts);
--fix adds the line where it is missing: first line, or after a shebang. Generated files
get it from their generator (scripts/gen), so --fix skips them and the check reports
them like any other file. Exit status 1 when a file lacks it.
"""
import subprocess
import sys
from pathlib import Path

LICENSE = 'Apache-2.0'
TAG = 'SPDX-License-Identifier: ' + LICENSE
COMMENT = {'.c': '//', '.h': '//', '.cpp': '//', '.hpp': '//', '.cu': '//', '.cmake': '#',
           '.py': '#', '.sh': '#', '.map': '/*'}
NAMED = {'CMakeLists.txt': '#', 'run': '#', 'demo': '#', 'generate': '#'}


def comment_of(path: Path):
    if path.name in NAMED:
        return NAMED[path.name]
    return COMMENT.get(path.suffix)


def main(argv):
    fix = '--fix' in argv
    args = [a for a in argv if not a.startswith('--')]
    root = Path(args[0] if args else Path(__file__).resolve().parent.parent)
    listed = subprocess.run(['git', '-C', str(root), 'ls-files', '-z'], capture_output=True, text=True)
    if listed.returncode != 0:
        print('spdx: not a git checkout (nothing to list); skipped')
        return 77
    files = listed.stdout.split('\0')
    missing = []
    for name in files:
        if not name or name.startswith(('scripts/spec/', 'test/abi/ur_')):
            continue
        path = root / name
        mark = comment_of(path)
        if mark is None or not path.is_file():
            continue
        text = path.read_text(errors='replace')
        head = text.split('\n', 3)[:3]
        if any(TAG in line for line in head):
            continue
        if fix and '.gen.' not in name and 'Do not edit' not in '\n'.join(head):
            line = f'{mark} {TAG} */\n' if mark == '/*' else f'{mark} {TAG}\n'
            if text.startswith('#!'):
                first, _, rest = text.partition('\n')
                text = first + '\n' + line + rest
            else:
                text = line + text
            path.write_text(text)
            continue
        missing.append(name)
    for name in missing:
        print(f'{name}: no "{TAG}" line in its first three lines')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
