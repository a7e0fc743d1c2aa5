# shellcheck shell=bash
# HAProxy and nginx as the benches' competitors, configured once: sourced by bench/run.sh (the
# retry rows) and bench/llm_proxy.sh (LLM traffic), so both measure the same hop configured the
# same way. Each function prints a config on stdout.

# nginx_temp_paths DIR: nginx's temp paths under DIR (the packaged ones are root's).
nginx_temp_paths() {
  local d=$1
  printf '  client_body_temp_path %s/client_body;\n  proxy_temp_path %s/proxy;\n' "$d" "$d"
  printf '  fastcgi_temp_path %s/fastcgi;\n  uwsgi_temp_path %s/uwsgi;\n  scgi_temp_path %s/scgi;\n' "$d" "$d" "$d"
}

# haproxy_retrying_cfg MAXCONN NAME:LISTEN_PORT:SERVER_PORT...
# HAProxy with layer-7 retries, as its documentation leads a user to configure it: a frontend on
# 127.0.0.1:LISTEN_PORT and a backend with one server 127.0.0.1:SERVER_PORT per NAME.
haproxy_retrying_cfg() {
  local maxconn=$1 spec name listen server
  shift
  printf 'global\n  maxconn %s\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 60s\n' "$maxconn"
  printf '  timeout server 60s\n  retries 3\n  retry-on all-retryable-errors\n  option redispatch\n'
  for spec in "$@"; do
    IFS=: read -r name listen server <<<"$spec"
    printf 'frontend fe_%s\n  bind 127.0.0.1:%s\n  default_backend be_%s\n' "$name" "$listen" "$name"
  done
  for spec in "$@"; do
    IFS=: read -r name listen server <<<"$spec"
    printf 'backend be_%s\n  server %s 127.0.0.1:%s\n' "$name" "$name" "$server"
  done
}

# nginx_retrying_conf DIR ERROR_LOG CONNECTIONS EXTRA NAME:LISTEN_PORT:SERVER_PORT[:twice]...
# nginx as a retrying reverse proxy, as its documentation leads a user to configure it:
# keep-alive to the upstream (HTTP/1.1, Connection cleared), proxy_next_upstream on errors,
# timeouts and 503 including non-idempotent requests. nginx never retries the server that just
# failed, so a `twice` upstream is listed twice (max_fails=0: a 503 must not take it out of
# rotation). Responses are buffered in memory only (proxy_max_temp_file_size 0), never spooled to
# disk. CONNECTIONS is worker_connections (and worker_rlimit_nofile when it is over 4096); EXTRA,
# more lines of the http block (e.g. "proxy_buffering off;").
nginx_retrying_conf() {
  local dir=$1 error_log=$2 connections=$3 extra=$4 spec name listen server copies
  shift 4
  printf 'worker_processes auto;\n'
  [ "$connections" -le 4096 ] || printf 'worker_rlimit_nofile %s;\n' "$connections"
  printf 'daemon off;\npid %s/nginx.pid;\nerror_log %s warn;\n' "$dir" "$error_log"
  printf 'events { worker_connections %s; }\nhttp {\n' "$connections"
  nginx_temp_paths "$dir"
  printf '  access_log off;\n  keepalive_requests 1000000;\n'
  for spec in "$@"; do
    IFS=: read -r name listen server copies <<<"$spec"
    printf '  upstream %s {\n' "$name"
    if [ "$copies" = twice ]; then
      printf '    server 127.0.0.1:%s max_fails=0;\n    server 127.0.0.1:%s max_fails=0;\n' "$server" "$server"
    else
      printf '    server 127.0.0.1:%s;\n' "$server"
    fi
    printf '    keepalive 64;\n  }\n'
  done
  printf '  proxy_http_version 1.1;\n  proxy_set_header Connection "";\n  proxy_max_temp_file_size 0;\n'
  [ -z "$extra" ] || printf '  %s\n' "$extra"
  printf '  proxy_next_upstream error timeout http_503 non_idempotent;\n'
  for spec in "$@"; do
    IFS=: read -r name listen server copies <<<"$spec"
    printf '  server {\n    listen 127.0.0.1:%s;\n    location / { proxy_pass http://%s; }\n  }\n' "$listen" "$name"
  done
  printf '}\n'
}
