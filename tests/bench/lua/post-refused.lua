-- POSTs the body in BODY (headers from -H), and counts the answers that are not EXPECT_STATUS
-- with EXPECT_BODY in them: a case whose every answer is a refusal by design.
wrk.method = "POST"
wrk.body = os.getenv("BODY")
local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
end
local expected_status = tonumber(os.getenv("EXPECT_STATUS"))
local expected_body = os.getenv("EXPECT_BODY")
mismatched = 0
function response(status, headers, body)
  if status ~= expected_status or not string.find(body, expected_body, 1, true) then mismatched = mismatched + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("mismatched") end
  io.write(string.format("Mismatched answers: %d\n", total))
end
