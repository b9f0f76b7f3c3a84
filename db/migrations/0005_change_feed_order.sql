-- Custom migration: the triggers of 0003 also stamp when the change was written, so changes that
-- the sequencer numbers together are numbered in the order they happened (NOW(6) is the writing
-- statement's start time, the same on a replica). Triggers otherwise unchanged.
ALTER TABLE `job_changes` ADD `changed_at` datetime(6);
--> statement-breakpoint
DROP TRIGGER `jobs_change_on_insert`;
--> statement-breakpoint
CREATE TRIGGER `jobs_change_on_insert` AFTER INSERT ON `jobs` FOR EACH ROW
  INSERT INTO `job_changes` (`job_id`, `seq`, `changed_at`, `ever_public`)
  VALUES (NEW.`id`, NULL, NOW(6), NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL)
  ON DUPLICATE KEY UPDATE `seq` = NULL, `changed_at` = NOW(6),
    `ever_public` = `ever_public` OR (NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL);
--> statement-breakpoint
DROP TRIGGER `jobs_change_on_update`;
--> statement-breakpoint
CREATE TRIGGER `jobs_change_on_update` AFTER UPDATE ON `jobs` FOR EACH ROW
BEGIN
  INSERT INTO `job_changes` (`job_id`, `seq`, `changed_at`, `ever_public`)
  VALUES (NEW.`id`, NULL, NOW(6), NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL)
  ON DUPLICATE KEY UPDATE `seq` = NULL, `changed_at` = NOW(6),
    `ever_public` = `ever_public` OR (NEW.`status` <> 'draft' AND NEW.`deleted_at` IS NULL);
  -- An id rewritten in place: the old id is gone for partners.
  IF OLD.`id` <> NEW.`id` THEN
    UPDATE `job_changes` SET `seq` = NULL, `changed_at` = NOW(6) WHERE `job_id` = OLD.`id`;
  END IF;
END;
--> statement-breakpoint
DROP TRIGGER `jobs_change_on_delete`;
--> statement-breakpoint
CREATE TRIGGER `jobs_change_on_delete` AFTER DELETE ON `jobs` FOR EACH ROW
  INSERT INTO `job_changes` (`job_id`, `seq`, `changed_at`, `ever_public`)
  VALUES (OLD.`id`, NULL, NOW(6), FALSE)
  ON DUPLICATE KEY UPDATE `seq` = NULL, `changed_at` = NOW(6);
