-- Drives `mzk lsp` from headless Neovim through the module shipped in
-- editors/neovim (on 0.7 it takes its start_client fallback) and writes what
-- the editor received as JSON.
-- env: LSP_CMD (server argv), TEST_FILE (file to open), OUT (JSON path),
--      DEF_LINE/DEF_COL (0-based definition position), COMP_LINE/COMP_COL,
--      PLUGIN (the editors/neovim folder), OTHER_YAML (a YAML file outside bundles),
--      AGENTS_FILE/TOOLS_FILE (the bundle's agents.yaml and tools.yaml).
local cmd = vim.split(os.getenv("LSP_CMD"), " ", { trimempty = true })
vim.opt.runtimepath:prepend(os.getenv("PLUGIN"))
local published = nil
local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  if result.uri == vim.uri_from_fname(os.getenv("TEST_FILE")) then published = result end
  return default_publish(err, result, ctx, config)
end
local mzk = require("mzk")
mzk.setup({ cmd = cmd })

-- A YAML file that is not part of a bundle gets no server.
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("OTHER_YAML")))
local other_attached = #vim.tbl_keys(vim.lsp.buf_get_clients(0)) > 0

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("TEST_FILE")))
local bufnr = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(bufnr)
local got = vim.wait(20000, function() return published ~= nil end, 20)

local function at(line, col)
  return { textDocument = { uri = uri }, position = { line = tonumber(line), character = tonumber(col) } }
end
local function first_result(responses)
  for _, r in pairs(responses or {}) do
    if r.result ~= nil then return r.result end
  end
  return vim.NIL
end
local definition = first_result(vim.lsp.buf_request_sync(bufnr, "textDocument/definition",
  at(os.getenv("DEF_LINE"), os.getenv("DEF_COL")), 10000))
local completion = first_result(vim.lsp.buf_request_sync(bufnr, "textDocument/completion",
  at(os.getenv("COMP_LINE"), os.getenv("COMP_COL")), 10000))
local fold_starts = {}
local folds = first_result(vim.lsp.buf_request_sync(bufnr, "textDocument/foldingRange",
  { textDocument = { uri = uri } }, 10000))
for _, fold in ipairs(folds ~= vim.NIL and folds or {}) do table.insert(fold_starts, fold.startLine) end
-- Folding ranges of agents.yaml and document links of tools.yaml, each asked
-- through the buffer the editor opened for it (0.7 has no client API for
-- either, so the requests go by method name).
local function request_in(file, method)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local result = first_result(vim.lsp.buf_request_sync(buf, method,
    { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 10000))
  return result ~= vim.NIL and result or {}
end
local agent_folds = {}
for _, fold in ipairs(request_in(os.getenv("AGENTS_FILE"), "textDocument/foldingRange")) do
  table.insert(agent_folds, { fold.startLine, fold.endLine })
end
local links = {}
for _, link in ipairs(request_in(os.getenv("TOOLS_FILE"), "textDocument/documentLink")) do
  table.insert(links, { link.range.start.line, link.target })
end
vim.cmd("buffer " .. bufnr)
local labels = {}
local items = completion ~= vim.NIL and (completion.items or completion) or {}
for _, item in ipairs(items) do table.insert(labels, item.label) end

-- :MzkGraph opens the Mermaid text in a new window.
local windows = #vim.api.nvim_list_wins()
vim.cmd("MzkGraph")
vim.wait(10000, function() return #vim.api.nvim_list_wins() > windows end, 20)
local graph = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")

local f = io.open(os.getenv("OUT"), "w")
f:write(vim.fn.json_encode({
  received = got,
  diagnostics = published and published.diagnostics or vim.NIL,
  editor_diagnostics = #vim.diagnostic.get(bufnr),
  definition = definition,
  completion = labels,
  folds = fold_starts,
  agent_folds = agent_folds,
  links = links,
  other_attached = other_attached,
  graph = graph,
}), "\n")
f:close()
for _, client in pairs(vim.lsp.get_active_clients()) do client.stop() end
vim.wait(2000, function() return #vim.lsp.get_active_clients() == 0 end, 20)
if got then vim.cmd("qa!") else vim.cmd("cquit 2") end
