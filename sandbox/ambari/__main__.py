# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`python -m sandbox.ambari --config <json>`: serve one emulated Ambari cluster until SIGTERM/SIGINT."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from .server import AmbariServer


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.ambari", description=__doc__)
    parser.add_argument("--config", required=True, help="JSON file: host, port, cluster_name, username, password, hosts, ...")
    args = parser.parse_args(argv)
    with open(args.config, encoding="utf-8") as handle:
        config = json.load(handle)
    server = AmbariServer(config)

    def stop(_signum, _frame):
        # shutdown() blocks until serve_forever returns, so it must run outside the serving thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"ambari emulator for cluster {config['cluster_name']} on {server.base_url}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
