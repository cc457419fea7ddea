// The SQLite plumbing of the meter store: a connection with its statement cache, prepared
// statements with typed bind / step / column readers, transaction guards, and the translation of
// SQLite's codes into the store's errors naming the file. Internal: store.h does not include it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace gpuplan::sqlite {

// An SQLite call that failed, with the step and SQLite's message. Flush turns the transient ones
// (busy, locked, full, I/O) into a status; everything else becomes InputError or
// EnvironmentError naming the file (Translate).
class SqliteFailure : public std::runtime_error {
 public:
  SqliteFailure(int rc, const std::string& what) : std::runtime_error(what), rc_(rc) {}
  int rc() const { return rc_; }

 private:
  int rc_;
};

// The primary result code (the low byte of an extended one).
int PrimaryCode(int rc);
// "SQLITE_BUSY", ...; "SQLite code <rc>" for the others.
std::string CodeName(int rc);
// "<step>: <SQLite's message> (<code name>)".
std::string Describe(sqlite3* db, int rc, const std::string& step);
// Busy, locked, full, I/O, out of memory, interrupted: may pass, the samples wait in memory.
bool IsTransient(int rc);
// The file is not what it should be: not SQLite, damaged, or its tables are not ours.
bool IsBadFile(int rc);
// InputError naming `path` for a bad file, else EnvironmentError naming it.
[[noreturn]] void Translate(const SqliteFailure& f, const std::string& path);

// The folder of `path` cannot be written by anyone (a read-only mount): statvfs says so,
// whatever this process's permissions (root writes through modes, not through ST_RDONLY).
bool OnReadOnlyMedia(const std::string& path);
// `path` as a file: URI path (RFC 3986): unreserved characters and '/' as they are, every other
// byte %-encoded, so '?', '#' and '%' in a file name stay part of the name.
std::string UriPath(const std::string& path);

// A prepared statement. Bind, Step and the column readers throw SqliteFailure. Unsigned values
// are stored bit for bit as SQLite's signed 64-bit integers.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  void Reset();
  void Bind(int i, int64_t v);
  void Bind(int i, int v) { Bind(i, int64_t{v}); }
  void Bind(int i, uint64_t v) { Bind(i, static_cast<int64_t>(v)); }
  void Bind(int i, const std::string& v);
  void Bind(int i, const char* v) { Bind(i, std::string(v)); }
  void BindNull(int i);
  template <typename T>
  void Bind(int i, const std::optional<T>& v) {
    if (v) {
      Bind(i, *v);
    } else {
      BindNull(i);
    }
  }
  // Binds the values to ?1, ?2, ... in order.
  template <typename... T>
  void BindAll(const T&... values) {
    int i = 0;
    (Bind(++i, values), ...);
  }
  // True for a row, false when done.
  bool Step();
  // Steps to the end (a statement that returns no rows).
  void Run();

  bool Null(int c) const;
  int64_t Int(int c) const;
  std::optional<int64_t> OptInt(int c) const;
  std::optional<int> OptInt32(int c) const;
  std::optional<uint64_t> OptUint(int c) const;
  std::optional<std::string> OptText(int c) const;

 private:
  void Check(int rc);
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A statement borrowed from the cache; reset when the borrower is done, so no finished or
// abandoned SELECT keeps a read snapshot open (which would stop WAL checkpoints).
class Use {
 public:
  explicit Use(Stmt& s) : stmt_(&s) {}
  ~Use() { stmt_->Reset(); }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;
  Stmt* operator->() { return stmt_; }
  Stmt& operator*() { return *stmt_; }

 private:
  Stmt* stmt_;
};

// One connection and its prepared statements (kept for the connection's life, by SQL text).
class Database {
 public:
  Database() = default;
  ~Database() { Close(); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // sqlite3_open_v2; returns its code. On failure the handle is kept (for its message) until
  // Close.
  int Open(const std::string& filename, int flags);
  // Finalises the statements and closes the connection; nothing when not open.
  void Close();
  sqlite3* handle() const { return db_; }

  // The cached statement for `sql` (prepared on first use), reset and unbound.
  Use Query(const std::string& sql);
  // Runs `sql` (one or more statements, no rows); SqliteFailure naming its first words.
  void Exec(const std::string& sql);
  // PRAGMA `name`'s integer value (0 when it returns no row).
  int64_t PragmaInt(const std::string& name);

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> statements_;
};

// A write transaction (BEGIN IMMEDIATE: the write lock is taken at the start, so a busy
// database fails here, before any work); rolled back unless committed.
class WriteTransaction {
 public:
  explicit WriteTransaction(Database& db);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void Commit();

 private:
  Database& db_;
  bool committed_ = false;
};

// A read transaction: the queries of one call see one snapshot.
class ReadTransaction {
 public:
  explicit ReadTransaction(Database& db);
  ~ReadTransaction();
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  Database& db_;
};

}  // namespace gpuplan::sqlite
