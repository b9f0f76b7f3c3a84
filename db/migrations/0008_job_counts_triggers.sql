-- Custom migration: the database keeps job_counts (0007) exact, whoever writes `jobs` (the API or
-- plain SQL from other systems). A job is counted while it is listable: not soft-deleted and not
-- a draft, i.e. visible_status is one of the four listed statuses. Each counted job adds 1 to two
-- rows: its (status, type, workplace) over all departments, and the same in its department.
-- The triggers run inside the writer's statement and transaction: a rollback takes the count back
-- with the row. They read the stored generated columns (visible_status, department_key), so the
-- counts group exactly as the listing filters match. 0003's change-feed triggers are untouched
-- (MariaDB and MySQL run several triggers per event, in creation order).
CREATE TRIGGER `jobs_counts_on_insert` AFTER INSERT ON `jobs` FOR EACH ROW
BEGIN
  IF NEW.`visible_status` IN ('active', 'open', 'paused', 'closed') THEN
    INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `n`)
    VALUES (FALSE, '', NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), 1),
      (TRUE, NEW.`department_key`, NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), 1)
    ON DUPLICATE KEY UPDATE `n` = `n` + 1;
  END IF;
END;
--> statement-breakpoint
-- Only a change of group moves a count (an edit of the title, say, touches no counter row, so it
-- never waits on another writer's counter lock); a department change leaves the all-departments
-- row alone.
CREATE TRIGGER `jobs_counts_on_update` AFTER UPDATE ON `jobs` FOR EACH ROW
BEGIN
  DECLARE was_counted BOOLEAN DEFAULT COALESCE(OLD.`visible_status` IN ('active', 'open', 'paused', 'closed'), FALSE);
  DECLARE is_counted BOOLEAN DEFAULT COALESCE(NEW.`visible_status` IN ('active', 'open', 'paused', 'closed'), FALSE);
  DECLARE same_group BOOLEAN DEFAULT was_counted AND is_counted AND OLD.`visible_status` = NEW.`visible_status`
    AND OLD.`type` = NEW.`type` AND OLD.`workplace` <=> NEW.`workplace`;
  IF NOT same_group THEN
    IF was_counted THEN
      UPDATE `job_counts` SET `n` = `n` - 1
      WHERE `by_department` = FALSE AND `department_key` = '' AND `status` = OLD.`visible_status`
        AND `type` = OLD.`type` AND `workplace` = COALESCE(OLD.`workplace`, 'none');
    END IF;
    IF is_counted THEN
      INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `n`)
      VALUES (FALSE, '', NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), 1)
      ON DUPLICATE KEY UPDATE `n` = `n` + 1;
    END IF;
  END IF;
  IF NOT (same_group AND OLD.`department_key` = NEW.`department_key`) THEN
    IF was_counted THEN
      UPDATE `job_counts` SET `n` = `n` - 1
      WHERE `by_department` = TRUE AND `department_key` = OLD.`department_key` AND `status` = OLD.`visible_status`
        AND `type` = OLD.`type` AND `workplace` = COALESCE(OLD.`workplace`, 'none');
    END IF;
    IF is_counted THEN
      INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `n`)
      VALUES (TRUE, NEW.`department_key`, NEW.`visible_status`, NEW.`type`, COALESCE(NEW.`workplace`, 'none'), 1)
      ON DUPLICATE KEY UPDATE `n` = `n` + 1;
    END IF;
  END IF;
END;
--> statement-breakpoint
CREATE TRIGGER `jobs_counts_on_delete` AFTER DELETE ON `jobs` FOR EACH ROW
BEGIN
  IF OLD.`visible_status` IN ('active', 'open', 'paused', 'closed') THEN
    UPDATE `job_counts` SET `n` = `n` - 1
    WHERE `by_department` = FALSE AND `department_key` = '' AND `status` = OLD.`visible_status`
      AND `type` = OLD.`type` AND `workplace` = COALESCE(OLD.`workplace`, 'none');
    UPDATE `job_counts` SET `n` = `n` - 1
    WHERE `by_department` = TRUE AND `department_key` = OLD.`department_key` AND `status` = OLD.`visible_status`
      AND `type` = OLD.`type` AND `workplace` = COALESCE(OLD.`workplace`, 'none');
  END IF;
END;
--> statement-breakpoint
-- The jobs that predate the triggers. Writers are held off while the counts are taken (LOCK
-- TABLES waits for open write transactions to commit and blocks new ones), and whatever the
-- triggers counted since they were created is replaced: so the starting counts are exact however
-- writes race this migration. 1,000,000 jobs take a few seconds.
LOCK TABLES `jobs` READ, `job_counts` WRITE;
--> statement-breakpoint
DELETE FROM `job_counts`;
--> statement-breakpoint
INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `n`)
SELECT FALSE, '', `visible_status`, `type`, COALESCE(`workplace`, 'none'), COUNT(*) FROM `jobs`
WHERE `visible_status` IN ('active', 'open', 'paused', 'closed')
GROUP BY `visible_status`, `type`, COALESCE(`workplace`, 'none');
--> statement-breakpoint
INSERT INTO `job_counts` (`by_department`, `department_key`, `status`, `type`, `workplace`, `n`)
SELECT TRUE, `department_key`, `visible_status`, `type`, COALESCE(`workplace`, 'none'), COUNT(*) FROM `jobs`
WHERE `visible_status` IN ('active', 'open', 'paused', 'closed')
GROUP BY `department_key`, `visible_status`, `type`, COALESCE(`workplace`, 'none');
--> statement-breakpoint
UNLOCK TABLES;
