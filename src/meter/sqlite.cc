// The SQLite plumbing of the meter store (sqlite.h): codes and messages, statements,
// the connection with its statement cache, transactions.
#include "meter/sqlite.h"

#include <sys/statvfs.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "core/error.h"

namespace gpuplan::sqlite {

int PrimaryCode(int rc) { return rc & 0xff; }

std::string CodeName(int rc) {
  switch (PrimaryCode(rc)) {
    case SQLITE_ERROR:
      return "SQLITE_ERROR";
    case SQLITE_PERM:
      return "SQLITE_PERM";
    case SQLITE_BUSY:
      return "SQLITE_BUSY";
    case SQLITE_LOCKED:
      return "SQLITE_LOCKED";
    case SQLITE_NOMEM:
      return "SQLITE_NOMEM";
    case SQLITE_READONLY:
      return "SQLITE_READONLY";
    case SQLITE_IOERR:
      return "SQLITE_IOERR";
    case SQLITE_CORRUPT:
      return "SQLITE_CORRUPT";
    case SQLITE_FULL:
      return "SQLITE_FULL";
    case SQLITE_CANTOPEN:
      return "SQLITE_CANTOPEN";
    case SQLITE_CONSTRAINT:
      return "SQLITE_CONSTRAINT";
    case SQLITE_NOTADB:
      return "SQLITE_NOTADB";
    default:
      break;
  }
  return "SQLite code " + std::to_string(rc);
}

std::string Describe(sqlite3* db, int rc, const std::string& step) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return step + ": " + detail + " (" + CodeName(rc) + ")";
}

bool IsTransient(int rc) {
  switch (PrimaryCode(rc)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_NOMEM:
    case SQLITE_INTERRUPT:
      return true;
    default:
      return false;
  }
}

bool IsBadFile(int rc) {
  switch (PrimaryCode(rc)) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
    case SQLITE_ERROR:
    case SQLITE_MISMATCH:
    case SQLITE_CONSTRAINT:
      return true;
    default:
      return false;
  }
}

void Translate(const SqliteFailure& f, const std::string& path) {
  if (IsBadFile(f.rc())) {
    throw InputError(std::string("not a usable gpuplan meter database: ") + f.what(), path);
  }
  throw EnvironmentError("meter database " + path + ": " + f.what());
}

bool OnReadOnlyMedia(const std::string& path) {
  struct statvfs fs {};
  const std::string folder = std::filesystem::absolute(path).parent_path().string();
  return statvfs(folder.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
}

std::string UriPath(const std::string& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  std::string out;
  for (unsigned char c : absolute) {
    if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// --- Stmt --------------------------------------------------------------------------------------

Stmt::Stmt(sqlite3* db, const std::string& sql) : db_(db) {
  const int rc = sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    throw SqliteFailure(rc, Describe(db, rc, "prepare"));
  }
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Stmt::Bind(int i, int64_t v) { Check(sqlite3_bind_int64(stmt_, i, v)); }

void Stmt::Bind(int i, const std::string& v) {
  Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
}

void Stmt::BindNull(int i) { Check(sqlite3_bind_null(stmt_, i)); }

bool Stmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  throw SqliteFailure(rc, Describe(db_, rc, "step"));
}

void Stmt::Run() {
  while (Step()) {
  }
}

bool Stmt::Null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }

int64_t Stmt::Int(int c) const { return sqlite3_column_int64(stmt_, c); }

std::optional<int64_t> Stmt::OptInt(int c) const { return Null(c) ? std::nullopt : std::optional<int64_t>(Int(c)); }

std::optional<int> Stmt::OptInt32(int c) const {
  return Null(c) ? std::nullopt : std::optional<int>(sqlite3_column_int(stmt_, c));
}

std::optional<uint64_t> Stmt::OptUint(int c) const {
  return Null(c) ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(Int(c)));
}

std::optional<std::string> Stmt::OptText(int c) const {
  if (Null(c)) {
    return std::nullopt;
  }
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c)));
}

void Stmt::Check(int rc) {
  if (rc != SQLITE_OK) {
    throw SqliteFailure(rc, Describe(db_, rc, "bind"));
  }
}

// --- Database ----------------------------------------------------------------------------------

int Database::Open(const std::string& filename, int flags) {
  Close();
  return sqlite3_open_v2(filename.c_str(), &db_, flags, nullptr);
}

void Database::Close() {
  statements_.clear();
  if (db_ != nullptr) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

Use Database::Query(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    it = statements_.emplace(sql, std::make_unique<Stmt>(db_, sql)).first;
  }
  it->second->Reset();
  return Use(*it->second);
}

void Database::Exec(const std::string& sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw SqliteFailure(rc, sql.substr(0, sql.find_first_of("(;\n")) + ": " + text + " (" + CodeName(rc) + ")");
  }
}

int64_t Database::PragmaInt(const std::string& name) {
  auto q = Query("PRAGMA " + name);
  return q->Step() ? q->Int(0) : 0;
}

// --- transactions ------------------------------------------------------------------------------

WriteTransaction::WriteTransaction(Database& db) : db_(db) { db_.Exec("BEGIN IMMEDIATE"); }

WriteTransaction::~WriteTransaction() {
  if (!committed_ && sqlite3_get_autocommit(db_.handle()) == 0) {
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void WriteTransaction::Commit() {
  db_.Exec("COMMIT");
  committed_ = true;
}

ReadTransaction::ReadTransaction(Database& db) : db_(db) { db_.Exec("BEGIN"); }

ReadTransaction::~ReadTransaction() {
  if (sqlite3_get_autocommit(db_.handle()) == 0) {
    sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr);
  }
}

}  // namespace gpuplan::sqlite
