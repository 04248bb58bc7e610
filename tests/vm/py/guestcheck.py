# SPDX-License-Identifier: GPL-2.0
"""The ok/FAIL checks of the guest's python test scripts (tests/vm/py): each check prints one
line, tally() the "N passed, M failed" line and the exit status."""
import os
import sys

import pyverbs.enums as e

# The driver under test: the one whose module is loaded.
DRIVER = 'rs' if os.path.isdir('/sys/module/rdma_rxe_rs') else 'c'
_counts = {'checks': 0, 'failures': 0}


def check(what, cond, detail=''):
    _counts['checks'] += 1
    if cond:
        print(f'ok   {what}')
    else:
        _counts['failures'] += 1
        print(f'FAIL {what}' + (f': {detail}' if detail else ''))
    sys.stdout.flush()
    return cond


def failures():
    return _counts['failures']


def tally():
    """Prints the summary line; the exit status: 1 if a check failed."""
    print(f'{_counts["checks"] - _counts["failures"]} passed, {_counts["failures"]} failed')
    return 1 if _counts['failures'] else 0


def wc_name(status):
    if status is None:
        return 'none (timeout)'
    for k in dir(e):
        if k.startswith('IBV_WC_') and k.endswith('_ERR') and getattr(e, k) == status:
            return k
    return 'IBV_WC_SUCCESS' if status == e.IBV_WC_SUCCESS else str(status)
