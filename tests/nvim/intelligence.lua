-- The editor's language intelligence for the agent, answered by Neovim 0.7 (headless): agent-ls
-- is started with `experimental.agentLs.intelligence`, and its agent/editorIntelligence
-- questions are answered through vim.diagnostic and vim.lsp, from another language server
-- attached to the buffers (tests/nvim/word_server.py). One prompt makes the scripted model call
-- the four tools; what happened goes as JSON to $AGENT_LS_NVIM_OUT.
--
--   AGENT_LS_NVIM_CMD    JSON array: the agent-ls command
--   AGENT_LS_NVIM_WORDS  JSON array: the word server's command
--   AGENT_LS_NVIM_ROOT   the workspace folder
--   AGENT_LS_NVIM_OUT    where to write the report
local out_path = os.getenv("AGENT_LS_NVIM_OUT")
local report = { asked = {}, errors = {} }

local function finish(code)
  local f = io.open(out_path, "w")
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd(code == 0 and "qa!" or "cq!")
end

local function fail(msg)
  table.insert(report.errors, msg)
  finish(1)
end

local ok, err = pcall(function()
  local root = os.getenv("AGENT_LS_NVIM_ROOT")
  local folders = { { uri = vim.uri_from_fname(root), name = "ws" } }
  local words_id = vim.lsp.start_client({
    name = "words", cmd = vim.fn.json_decode(os.getenv("AGENT_LS_NVIM_WORDS")), root_dir = root,
    workspace_folders = folders,
  })

  -- A buffer for the uri, loaded and attached to the word server.
  local function buffer(uri)
    local bufnr = vim.uri_to_bufnr(uri)
    vim.fn.bufload(bufnr)
    vim.lsp.buf_attach_client(bufnr, words_id)
    return bufnr
  end

  -- Ask the editor's other language servers (vim.lsp), not agent-ls.
  local function ask_lsp(bufnr, method, params)
    local responses = vim.lsp.buf_request_sync(bufnr, method, params, 10000) or {}
    local out = {}
    for id, response in pairs(responses) do
      if id ~= nil and response.result then
        for _, item in ipairs(response.result) do table.insert(out, item) end
      end
    end
    return out
  end

  local function location(l)
    return { uri = l.uri or l.targetUri, range = l.range or l.targetSelectionRange or l.targetRange }
  end

  local function diagnostics(bufnr, uri)
    local out = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      local lsp = d.user_data and d.user_data.lsp or {}
      local range = lsp.range or { start = { line = d.lnum, character = d.col },
                                   ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col } }
      local code = d.code or lsp.code
      table.insert(out, { uri = uri, range = range, message = d.message, severity = d.severity,
                          source = d.source or vim.NIL, code = code and tostring(code) or vim.NIL })
    end
    return out
  end

  local agent_caps = vim.lsp.protocol.make_client_capabilities()
  agent_caps.experimental = { agentLs = { intelligence = true } }
  local agent_id = vim.lsp.start_client({
    name = "agent-ls", cmd = vim.fn.json_decode(os.getenv("AGENT_LS_NVIM_CMD")), root_dir = root,
    workspace_folders = folders, capabilities = agent_caps,
    handlers = {
      ["agent/event"] = function() end,
      ["mcp/statusChanged"] = function() end,
      ["agent/approve"] = function() return { answer = "deny" } end,
      ["agent/editorIntelligence"] = function(_, params)
        table.insert(report.asked, params.kind)
        if params.kind == "diagnostics" then
          if params.uri ~= nil and params.uri ~= vim.NIL then
            return { diagnostics = diagnostics(buffer(params.uri), params.uri) }
          end
          local all = {}
          for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
            for _, d in ipairs(diagnostics(bufnr, vim.uri_from_bufnr(bufnr))) do table.insert(all, d) end
          end
          return { diagnostics = all }
        elseif params.kind == "definition" or params.kind == "references" then
          local bufnr = buffer(params.uri)
          local method = params.kind == "definition" and "textDocument/definition" or "textDocument/references"
          local found = ask_lsp(bufnr, method, { textDocument = { uri = params.uri }, position = params.position,
                                                 context = { includeDeclaration = true } })
          return { locations = vim.tbl_map(location, found) }
        elseif params.kind == "symbols" then
          local bufnr = vim.api.nvim_get_current_buf()
          local found = ask_lsp(bufnr, "workspace/symbol", { query = params.query })
          return { symbols = vim.tbl_map(function(s)
            return { name = s.name, kind = s.kind, location = location(s.location), containerName = s.containerName }
          end, found) }
        end
        return vim.NIL
      end,
    },
  })
  local agent = vim.lsp.get_client_by_id(agent_id)
  local words = vim.lsp.get_client_by_id(words_id)
  if not vim.wait(20000, function() return agent.initialized and words.initialized end, 20) then
    return fail("the servers did not initialize")
  end

  -- The user has main.ts open; the word server reports its problems into vim.diagnostic.
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/src/main.ts"))
  vim.lsp.buf_attach_client(0, words_id)
  if not vim.wait(10000, function() return #vim.diagnostic.get(0) > 0 end, 20) then
    return fail("the word server reported no diagnostics")
  end

  local done, res, rerr = false, nil, nil
  agent.request("agent/prompt", { text = "who calls add?" }, function(e, r) done, res, rerr = true, r, e end)
  if not vim.wait(90000, function() return done end, 10) then
    return fail("no answer to agent/prompt")
  end
  if rerr then return fail("agent/prompt: " .. tostring(rerr.message)) end
  report.prompt = { text = res.text, stopReason = res.stopReason }

  agent.stop()
  words.stop()
  vim.wait(20000, function() return agent.is_stopped() and words.is_stopped() end, 20)
  finish(0)
end)
if not ok then
  fail(tostring(err))
end
