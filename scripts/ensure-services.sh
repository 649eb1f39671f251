#!/usr/bin/env bash
# Starts the local PostgreSQL and NATS (JetStream) when they are not running, the way the machine notes say,
# and waits until both accept connections. Integration and end-to-end tests need them.
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! port_open 5432; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
    echo "PostgreSQL is not running on 127.0.0.1:5432 and not installed: install it (apt-get install -y postgresql)" \
      "and allow trust authentication from 127.0.0.1" >&2
    exit 1
  fi
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
fi
if ! port_open 4222; then
  if [ ! -x /usr/sbin/nats-server ]; then
    echo "NATS is not running on 127.0.0.1:4222 and not installed: install it (apt-get install -y nats-server)" >&2
    exit 1
  fi
  echo "starting NATS with JetStream"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
fi
for _ in $(seq 1 60); do
  if port_open 5432 && port_open 4222; then
    echo "PostgreSQL and NATS are up"
    exit 0
  fi
  sleep 0.5
done
echo "PostgreSQL or NATS did not come up" >&2
exit 1
