-- POSTs one prepared body per request, each used once (one per line in BODIES): refresh tokens
-- are single-use, like codes. Requests are formatted in init(), before the clock starts.
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  local n = tonumber(os.getenv("THREADS"))
  requests = {}
  local i = 0
  for body in io.lines(os.getenv("BODIES")) do
    if i % n == id then
      requests[#requests + 1] = wrk.format("POST", nil, nil, body)
    end
    i = i + 1
  end
  next_request = 1
end
function request()
  local r = requests[next_request]
  next_request = next_request + 1
  return r or wrk.format("POST", nil, nil, "grant_type=refresh_token&refresh_token=exhausted")
end
