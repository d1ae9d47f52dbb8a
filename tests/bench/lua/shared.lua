-- What the per-request scripts share (wrk loads it through LUA_PATH, set by the bench).
local shared = {}

-- In wrk's main state: numbers each thread (the global `id` in its own state) before init().
local threads = 0
function shared.setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

-- In a thread's init(): this thread's share of the lines of `file` (every THREADS-th, or all of
-- them when fewer than THREADS are used), the first `limit` only, each formatted into a request
-- before the clock starts.
function shared.requests(file, format, limit)
  local n = tonumber(os.getenv("THREADS"))
  limit = limit or math.huge
  local requests, i = {}, 0
  for line in io.lines(file) do
    if i >= limit then break end
    if limit < n or i % n == id then requests[#requests + 1] = format(line) end
    i = i + 1
  end
  return requests
end

-- A request() that sends each prepared request once, in order, then `fallback` (which the server
-- refuses, so a shortfall shows as non-2xx answers and fails the run).
function shared.once_each(requests, fallback)
  local next_request = 1
  return function()
    local r = requests[next_request]
    next_request = next_request + 1
    return r or fallback
  end
end

-- Counting answers that are not EXPECT_STATUS with EXPECT_BODY in them, for a case whose every
-- answer is a refusal by design (a device poll that finds nothing is 400 authorization_pending):
-- call shared.expect_refusals() at the top level of the script; it defines the script's setup,
-- response and done (a script that also needs shared.setup gets it from there).
function shared.expect_refusals()
  local threads = {}
  local expected_status = tonumber(os.getenv("EXPECT_STATUS"))
  local expected_body = os.getenv("EXPECT_BODY")
  mismatched = 0
  function setup(thread)
    shared.setup(thread)
    threads[#threads + 1] = thread
  end
  function response(status, headers, body)
    if status ~= expected_status or not string.find(body, expected_body, 1, true) then mismatched = mismatched + 1 end
  end
  function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do total = total + thread:get("mismatched") end
    io.write(string.format("Mismatched answers: %d\n", total))
  end
end

return shared
