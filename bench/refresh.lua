-- wrk script of POST /tokens (bench/refresh.ts and others), each request with a token set nobody used yet.
-- bench/support/refresh.ts prepends `sets = { "access refresh", ... }`, one per connection. Each thread
-- keeps a queue of unused sets: a request takes one, its answer puts the new set back.
-- (A thread's share is handed over as one string: wrk crashes copying nested tables to a thread.)
-- A request whose answer is not 201 loses its set: with none left, requests fail and are counted.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  -- wrk calls request() once on the first thread's state to check the script, and sends nothing:
  -- a placeholder set takes that call.
  local mine = #threads == 1 and { "unsent unsent" } or {}
  -- wrk starts 2 threads here: thread 1 takes the odd sets, thread 2 the even ones.
  for i = #threads, #sets, 2 do table.insert(mine, sets[i]) end
  thread:set("shared", table.concat(mine, ";"))
end

function request()
  if queue == nil then
    queue = {}
    for access, refresh in shared:gmatch("([^ ;]+) ([^ ;]+)") do table.insert(queue, { access, refresh }) end
  end
  local set = table.remove(queue, 1)
  if set == nil then
    return wrk.format("POST", "/tokens", { ["Host"] = wrk.headers["Host"], ["Content-Type"] = "application/json" }, "{}")
  end
  return wrk.format("POST", "/tokens", {
    ["Host"] = wrk.headers["Host"],
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. set[1],
  }, '{"refresh_token":"' .. set[2] .. '"}')
end

function response(status, headers, body)
  local access = body:match('"access_token":"([^"]+)"')
  local refresh = body:match('"refresh_token":"([^"]+)"')
  if status == 201 and access and refresh then table.insert(queue, { access, refresh }) end
end
