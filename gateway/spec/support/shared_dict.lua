-- One ngx.shared.DICT (lua-nginx-module's shared memory dictionary) on a clock the spec controls:
-- get, set, incr (with init and init_ttl), ttl; an entry past its expiry is gone.
local M = {}

-- clock: { now = seconds (may be fractional) }.
function M.new(clock)
  local entries = {}
  local dict = {}

  local function live(key)
    local e = entries[key]
    if e and e.expires and e.expires <= clock.now then
      entries[key] = nil
      return nil
    end
    return e
  end

  function dict:get(key)
    local e = live(key)
    if e then
      return e.value
    end
    return nil
  end

  function dict:set(key, value, exptime)
    entries[key] = { value = value, expires = exptime and exptime > 0 and clock.now + exptime or nil }
    return true, nil, false
  end

  -- newval, err, forcible: a missing key is "not found" unless init is given, in which case it is
  -- created as init + value with init_ttl (only a created entry gets a ttl).
  function dict:incr(key, value, init, init_ttl)
    local e = live(key)
    if not e then
      if init == nil then
        return nil, "not found"
      end
      self:set(key, init + value, init_ttl)
      return init + value, nil, false
    end
    if type(e.value) ~= "number" then
      return nil, "not a number"
    end
    e.value = e.value + value
    return e.value, nil, false
  end

  function dict:ttl(key)
    local e = live(key)
    if not e then
      return nil, "not found"
    end
    return e.expires and (e.expires - clock.now) or 0
  end

  return dict
end

return M
