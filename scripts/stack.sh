#!/usr/bin/env bash
# The local stack of dedup-health: Redis, a real Kafka 3.9 broker (KRaft), Alertmanager 0.25 and
# Prometheus 2.42 (which sends its alerts to that Alertmanager).
#   scripts/stack.sh up [redis|kafka|alertmanager|prometheus ...]    start what is not running (idempotent)
#   scripts/stack.sh down [redis|kafka|alertmanager|prometheus ...]  stop what this script started, by pid
#   scripts/stack.sh status
#   scripts/stack.sh up redis-cluster                    a 3-master Redis Cluster on 127.0.0.1:7000-7002
#                                                        (also: npm run stack:up -- --redis-cluster)
#   scripts/stack.sh up java-consumer-jar                build examples/java-consumer (mvn) when missing or stale
#                                                        (a plain `up` does it too)
#   TOPIC=t SERVICE=s HANDLER=h METRICS_PORT=p scripts/stack.sh up java-consumer
#                                                        build it and start one Java consumer with that env
# Every process started here is recorded in .stack/pids/<name>.pid and stopped by that pid; logs go
# to .stack/logs/. Nothing is downloaded except through apt-get (as root) and mvn (Maven Central).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STACK="$ROOT/.stack"
PIDS="$STACK/pids"
LOGS="$STACK/logs"
mkdir -p "$PIDS" "$LOGS"

REDIS_PORT=6379
KAFKA_PORT=9092
PROM_PORT=9090
AM_PORT=9093
KAFKA_LIBS="$STACK/kafka-libs"
ALL=(redis kafka alertmanager prometheus)
CLUSTER_PORTS=(7000 7001 7002)

say() { printf '[stack] %s\n' "$*"; }
die() { printf '[stack] error: %s\n' "$*" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && exec 3>&- ; }

alive() { # name -> 0 when our recorded pid runs
  local f="$PIDS/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

need() { # command, debian package: install it as root, else explain
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing $2 with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >"$LOGS/apt-$2.log" 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >"$LOGS/apt-$2.log" 2>&1; } \
      || die "could not install $2: see $LOGS/apt-$2.log"
  else
    die "$1 is missing: install the Debian package '$2' (apt-get install $2)"
  fi
}

want() { # command, debian package: what only some tests use — installed as root, otherwise a warning
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    need "$1" "$2"
  else
    say "warning: $1 is missing (Debian package '$2'): the tests that use it will fail"
  fi
}

wait_for() { # description, seconds, command...
  local what=$1 secs=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.5
  done
}

start_bg() { # name, log, command... : start detached in its own session, record pid
  local name=$1 log=$2; shift 2
  setsid "$@" >"$log" 2>&1 < /dev/null &
  echo $! >"$PIDS/$name.pid"
}

redis_ping() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping | grep -q PONG; }

up_redis() {
  need redis-cli redis-tools
  if redis_ping 2>/dev/null; then say "redis: up at 127.0.0.1:$REDIS_PORT"; return 0; fi
  need redis-server redis-server
  mkdir -p "$STACK/redis"
  start_bg redis "$LOGS/redis.log" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' \
    --appendonly no --dir "$STACK/redis"
  wait_for redis 15 redis_ping || die "redis did not answer PING; see $LOGS/redis.log"
  say "redis: started at 127.0.0.1:$REDIS_PORT (pid $(cat "$PIDS/redis.pid"))"
}

kafka_libs() {
  if [ -f "$KAFKA_LIBS/.complete" ]; then return 0; fi
  need java openjdk-17-jre-headless
  need mvn maven
  say "kafka: fetching the broker jars from Maven Central (first run only)"
  mvn -q -B -f "$ROOT/infra/kafka/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$KAFKA_LIBS" >"$LOGS/mvn.log" 2>&1 || die "mvn could not fetch Kafka: see $LOGS/mvn.log"
  touch "$KAFKA_LIBS/.complete"
}

kafka_ready() { node "$ROOT/scripts/kafka-ready.mjs" "127.0.0.1:$KAFKA_PORT"; }

up_kafka() {
  want kcat kafkacat # the tests read and write records with the Kafka CLI, independent of kafkajs
  if alive kafka && port_open "$KAFKA_PORT"; then say "kafka: up at 127.0.0.1:$KAFKA_PORT"; ensure_topics; return 0; fi
  if port_open "$KAFKA_PORT"; then
    say "kafka: something else listens on 127.0.0.1:$KAFKA_PORT; using it"
    kafka_ready || die "127.0.0.1:$KAFKA_PORT is taken by something that is not a Kafka broker"
    ensure_topics; return 0
  fi
  kafka_libs
  local dir="$STACK/kafka" cp="$KAFKA_LIBS/*"
  mkdir -p "$dir"
  sed "s#@DATA_DIR@#$dir/data#" "$ROOT/infra/kafka/server.properties.template" >"$dir/server.properties"
  local jvm=(java -Xms256m -Xmx512m -XX:+UseSerialGC -Dlog4j.configuration="file:$ROOT/infra/kafka/log4j.properties" -cp "$cp")
  if [ ! -f "$dir/data/meta.properties" ]; then
    local id
    id=$("${jvm[@]}" kafka.tools.StorageTool random-uuid 2>>"$LOGS/kafka.log")
    "${jvm[@]}" kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" >>"$LOGS/kafka.log" 2>&1 \
      || die "kafka storage format failed; see $LOGS/kafka.log"
  fi
  start_bg kafka "$LOGS/kafka.log" "${jvm[@]}" kafka.Kafka "$dir/server.properties"
  wait_for kafka 90 kafka_ready || die "kafka did not become ready in 90 s; see $LOGS/kafka.log"
  say "kafka: started at 127.0.0.1:$KAFKA_PORT (pid $(cat "$PIDS/kafka.pid"))"
  ensure_topics
}

ensure_topics() {
  local out
  out=$(node "$ROOT/scripts/kafka-ready.mjs" "127.0.0.1:$KAFKA_PORT" --create demo.events:6 demo.events.dlq:1) \
    || die "could not create the demo topics"
  say "kafka: topics $(echo "$out" | paste -sd ',' | sed 's/,/, /g')"
}

prom_ready() { curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready"; }

up_prometheus() {
  want victoria-metrics victoria-metrics # the store-parity test (VictoriaMetrics + vmalert)
  # Alertmanager's own line is up_alertmanager's (it runs just before): printed once.
  if prom_ready >/dev/null 2>&1; then say "prometheus: up at 127.0.0.1:$PROM_PORT"; return 0; fi
  need prometheus prometheus
  need curl curl
  mkdir -p "$STACK/prometheus"
  # The rules' dashboard_url / runbook_url point at the app's public address when it is given
  # (DASHBOARD_BASE_URL, RUNBOOK_BASE_URL): rendered into .stack; else the committed files (127.0.0.1:3000).
  local config="$ROOT/infra/prometheus/prometheus.yml"
  if [[ -n "${DASHBOARD_BASE_URL:-}${RUNBOOK_BASE_URL:-}" ]]; then
    config=$(cd "$ROOT" && npx --no-install tsx scripts/gen-infra.ts --prometheus-dir "$STACK/prometheus-config") || die "could not render the rules for DASHBOARD_BASE_URL=${DASHBOARD_BASE_URL:-} (scripts/gen-infra.ts)"
    say "prometheus: rules link to ${DASHBOARD_BASE_URL:-http://127.0.0.1:3000} ($config)"
  fi
  start_bg prometheus "$LOGS/prometheus.log" prometheus \
    --config.file="$config" \
    --storage.tsdb.path="$STACK/prometheus" \
    --web.listen-address="127.0.0.1:$PROM_PORT" \
    --web.enable-lifecycle
  wait_for prometheus 30 prom_ready || die "prometheus did not become ready; see $LOGS/prometheus.log"
  say "prometheus: started at 127.0.0.1:$PROM_PORT (pid $(cat "$PIDS/prometheus.pid"))"
}

am_ready() { curl -fsS "http://127.0.0.1:$AM_PORT/-/ready"; }

# The process listening on 127.0.0.1:<port>, as "pid command line" (empty when none or unknown).
port_owner() {
  command -v ss >/dev/null 2>&1 || return 0
  local pid; pid=$(ss -ltnpH "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  [ -n "$pid" ] && printf '%s %s' "$pid" "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)"
  return 0
}

up_alertmanager() {
  if am_ready >/dev/null 2>&1; then say "alertmanager: up at 127.0.0.1:$AM_PORT"; return 0; fi
  if port_open "$AM_PORT"; then
    local owner; owner=$(port_owner "$AM_PORT")
    if [[ "$owner" == *kafka.Kafka* ]]; then
      # A broker started from the template before its controller moved to 9095 still holds 9093.
      say "alertmanager: NOT started: 127.0.0.1:$AM_PORT is held by a Kafka broker (pid ${owner%% *}) whose KRaft controller"
      say "  still listens there (started from an older infra/kafka/server.properties.template). The template now puts"
      say "  the controller on 9095: restart that broker when you can (npm run stack:down kafka; npm run stack:up)."
      say "  Until then the app runs without Alertmanager (unset ALERTMANAGER_URL or point it elsewhere)."
    else
      say "alertmanager: NOT started: 127.0.0.1:$AM_PORT is taken by something that is not Alertmanager${owner:+ (pid $owner)}"
    fi
    return 0
  fi
  need prometheus-alertmanager prometheus-alertmanager
  need curl curl
  mkdir -p "$STACK/alertmanager"
  # No HA cluster (an empty --cluster.listen-address): it would bind 0.0.0.0:9094.
  start_bg alertmanager "$LOGS/alertmanager.log" prometheus-alertmanager \
    --config.file="$ROOT/infra/alertmanager/alertmanager.yml" \
    --storage.path="$STACK/alertmanager" \
    --web.listen-address="127.0.0.1:$AM_PORT" \
    --cluster.listen-address=
  wait_for alertmanager 30 am_ready || die "alertmanager did not become ready; see $LOGS/alertmanager.log"
  say "alertmanager: started at 127.0.0.1:$AM_PORT (pid $(cat "$PIDS/alertmanager.pid"); ALERTMANAGER_URL=http://127.0.0.1:$AM_PORT)"
}

cluster_ok() { redis-cli -p "${CLUSTER_PORTS[0]}" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; }

up_redis-cluster() {
  need redis-server redis-server
  need redis-cli redis-tools
  if cluster_ok; then say "redis-cluster: up at 127.0.0.1:${CLUSTER_PORTS[*]}"; return 0; fi
  local p dir
  for p in "${CLUSTER_PORTS[@]}"; do
    if port_open "$p"; then
      alive "redis-$p" || die "127.0.0.1:$p is taken by a process this script did not start"
      continue
    fi
    dir="$STACK/redis-cluster/$p"
    rm -rf "$dir"; mkdir -p "$dir"
    start_bg "redis-$p" "$LOGS/redis-$p.log" redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$dir/nodes.conf" --cluster-node-timeout 5000 --save '' --appendonly no --dir "$dir"
  done
  for p in "${CLUSTER_PORTS[@]}"; do
    wait_for "redis-$p" 15 redis-cli -p "$p" ping || die "redis on port $p did not answer; see $LOGS/redis-$p.log"
  done
  local keys; keys=$(redis-cli -p "${CLUSTER_PORTS[0]}" cluster info | grep -o 'cluster_slots_assigned:[0-9]*' | cut -d: -f2)
  if [ "${keys:-0}" = 0 ]; then
    local addrs=(); for p in "${CLUSTER_PORTS[@]}"; do addrs+=("127.0.0.1:$p"); done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$LOGS/redis-cluster-create.log" 2>&1 \
      || die "redis-cli --cluster create failed; see $LOGS/redis-cluster-create.log"
  fi
  wait_for redis-cluster 30 cluster_ok || die "the cluster did not reach cluster_state:ok"
  say "redis-cluster: started at 127.0.0.1:${CLUSTER_PORTS[*]} (REDIS_CLUSTER_NODES=127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002)"
}

JAVA_DIR="$ROOT/examples/java-consumer"
JAVA_JAR="$JAVA_DIR/target/java-consumer.jar"

# The Java reference consumer's jar: built with Maven (Central into ~/.m2) when missing or older than
# its sources, here in the stack step, so that no timed test waits for a download or a compile.
up_java-consumer-jar() {
  if [ -f "$JAVA_JAR" ] && [ -z "$(find "$JAVA_DIR/src" "$JAVA_DIR/pom.xml" -newer "$JAVA_JAR" -print -quit)" ]; then
    say "java-consumer: $JAVA_JAR is built"; return 0
  fi
  need javac openjdk-17-jdk-headless
  need mvn maven
  say "java-consumer: building $JAVA_JAR (mvn package; the first run fetches its dependencies from Maven Central)"
  mvn -q -B -f "$JAVA_DIR/pom.xml" package >"$LOGS/mvn-java-consumer.log" 2>&1 \
    || die "mvn could not build the Java consumer: see $LOGS/mvn-java-consumer.log"
}

# One Java consumer on demand, configured by the caller's environment (examples/java-consumer/README.md).
up_java-consumer() {
  up_java-consumer-jar
  if alive java-consumer; then say "java-consumer: up (pid $(cat "$PIDS/java-consumer.pid"))"; return 0; fi
  TOPIC=${TOPIC:-java.events} METRICS_PORT=${METRICS_PORT:-9464} start_bg java-consumer "$LOGS/java-consumer.log" java -jar "$JAVA_JAR"
  wait_for java-consumer 60 grep -q 'assigned' "$LOGS/java-consumer.log" || die "the Java consumer was not assigned its partitions in 60 s; see $LOGS/java-consumer.log"
  say "java-consumer: started (pid $(cat "$PIDS/java-consumer.pid")), metrics on 127.0.0.1:${METRICS_PORT:-9464}"
}

down_redis-cluster() { local p; for p in "${CLUSTER_PORTS[@]}"; do stop_one "redis-$p"; done; rm -rf "$STACK/redis-cluster"; }

stop_one() {
  local name=$1 f="$PIDS/$1.pid"
  if ! [ -f "$f" ]; then say "$name: not started by this script; left alone"; return 0; fi
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    local end=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.3; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    say "$name: stopped (pid $pid)"
  else
    say "$name: was not running (stale pid $pid)"
  fi
  rm -f "$f"
}

status() {
  local rc=0
  if redis_ping 2>/dev/null; then say "redis: up (127.0.0.1:$REDIS_PORT)$(alive redis && echo ", ours, pid $(cat "$PIDS/redis.pid")")"; else say "redis: down"; rc=1; fi
  if port_open "$KAFKA_PORT"; then say "kafka: up (127.0.0.1:$KAFKA_PORT)$(alive kafka && echo ", ours, pid $(cat "$PIDS/kafka.pid")")"; else say "kafka: down"; rc=1; fi
  if am_ready >/dev/null 2>&1; then say "alertmanager: up (127.0.0.1:$AM_PORT)$(alive alertmanager && echo ", ours, pid $(cat "$PIDS/alertmanager.pid")")"; else say "alertmanager: down$(port_open "$AM_PORT" && echo "; 127.0.0.1:$AM_PORT is held by $(port_owner "$AM_PORT" | cut -c1-80)")"; rc=1; fi
  if prom_ready >/dev/null 2>&1; then say "prometheus: up (127.0.0.1:$PROM_PORT)$(alive prometheus && echo ", ours, pid $(cat "$PIDS/prometheus.pid")")"; else say "prometheus: down"; rc=1; fi
  return $rc
}

cmd=${1:-status}; shift || true
targets=()
for a in "$@"; do
  case "$a" in
    --redis-cluster) targets+=(redis-cluster) ;;
    redis|kafka|alertmanager|prometheus|redis-cluster|java-consumer|java-consumer-jar) targets+=("$a") ;;
    *) die "unknown component '$a' (redis, kafka, alertmanager, prometheus, redis-cluster, --redis-cluster, java-consumer, java-consumer-jar)" ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  targets=("${ALL[@]}")
  # `up` with no names also builds the Java consumer's jar (the tests start it; nothing runs here).
  if [ "$cmd" = up ]; then targets+=(java-consumer-jar); fi
  # `down` with no names also stops a cluster this script started.
  if [ "$cmd" = down ] && ls "$PIDS"/redis-700*.pid >/dev/null 2>&1; then targets+=(redis-cluster); fi
elif [ "$cmd" = up ] && [ "${targets[*]}" = redis-cluster ] && [ $# -eq 1 ] && [ "$1" = --redis-cluster ]; then
  targets=("${ALL[@]}" redis-cluster)
fi
case "$cmd" in
  up) for t in "${targets[@]}"; do "up_$t"; done ;;
  down) for ((i=${#targets[@]}-1; i>=0; i--)); do
          if [ "${targets[$i]}" = redis-cluster ]; then down_redis-cluster; elif [ "${targets[$i]}" != java-consumer-jar ]; then stop_one "${targets[$i]}"; fi
        done ;;
  status) status; if cluster_ok; then say "redis-cluster: up (127.0.0.1:${CLUSTER_PORTS[*]})"; fi ;;
  *) die "usage: stack.sh up|down|status [redis|kafka|alertmanager|prometheus ...]" ;;
esac
