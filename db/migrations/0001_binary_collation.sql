-- Custom migration: a binary collation makes every string comparison exact, so that the
-- department filter's case-folding lives in one visible place (jobs.department_key) instead of
-- depending on the server's default collation, which differs between MariaDB and MySQL 8 and
-- also folds accents.
ALTER TABLE `jobs` CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
