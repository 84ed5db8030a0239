//! The SFTP side of a warehouse's file drop: an `russh_sftp` handler that serves a folder
//! (the login directory), with the operations a sync pass uses. Like many SFTP v3 servers, it
//! refuses to rename over an existing file.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use russh_sftp::protocol::{Attrs, Data, File, FileAttributes, Handle, Name, OpenFlags, Status, StatusCode};

enum Open {
    File(std::fs::File),
    /// A directory's entries, and whether they were handed out.
    Dir(Vec<File>, bool),
}

pub struct Files {
    root: PathBuf,
    open: HashMap<String, Open>,
    next: u64,
}

impl Files {
    pub fn new(root: PathBuf) -> Files {
        Files { root, open: HashMap::new(), next: 0 }
    }

    /// A client path (relative to the login directory, or absolute from it) on disk.
    fn at(&self, path: &str) -> Result<PathBuf, StatusCode> {
        let mut full = self.root.clone();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(StatusCode::PermissionDenied),
                part => full.push(part),
            }
        }
        Ok(full)
    }

    fn handle(&mut self, open: Open) -> String {
        self.next += 1;
        let handle = format!("h{}", self.next);
        self.open.insert(handle.clone(), open);
        handle
    }
}

fn ok(id: u32) -> Status {
    Status { id, status_code: StatusCode::Ok, error_message: "Ok".into(), language_tag: "en-US".into() }
}

fn io(e: std::io::Error) -> StatusCode {
    match e.kind() {
        std::io::ErrorKind::NotFound => StatusCode::NoSuchFile,
        std::io::ErrorKind::PermissionDenied => StatusCode::PermissionDenied,
        _ => StatusCode::Failure,
    }
}

impl russh_sftp::server::Handler for Files {
    type Error = StatusCode;

    fn unimplemented(&self) -> Self::Error {
        StatusCode::OpUnsupported
    }

    async fn stat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        let metadata = std::fs::metadata(self.at(&path)?).map_err(io)?;
        Ok(Attrs { id, attrs: FileAttributes::from(&metadata) })
    }

    async fn lstat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        self.stat(id, path).await
    }

    async fn realpath(&mut self, id: u32, path: String) -> Result<Name, Self::Error> {
        Ok(Name { id, files: vec![File::dummy(format!("/{}", path.trim_start_matches(['.', '/'])))] })
    }

    async fn open(
        &mut self,
        id: u32,
        filename: String,
        flags: OpenFlags,
        _: FileAttributes,
    ) -> Result<Handle, Self::Error> {
        let file = std::fs::OpenOptions::from(flags).open(self.at(&filename)?).map_err(io)?;
        Ok(Handle { id, handle: self.handle(Open::File(file)) })
    }

    async fn read(&mut self, id: u32, handle: String, offset: u64, len: u32) -> Result<Data, Self::Error> {
        let Some(Open::File(file)) = self.open.get_mut(&handle) else { return Err(StatusCode::Failure) };
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let mut data = vec![0; len as usize];
        let n = file.read(&mut data).map_err(io)?;
        if n == 0 {
            return Err(StatusCode::Eof);
        }
        data.truncate(n);
        Ok(Data { id, data })
    }

    async fn write(
        &mut self,
        id: u32,
        handle: String,
        offset: u64,
        data: Vec<u8>,
    ) -> Result<Status, Self::Error> {
        let Some(Open::File(file)) = self.open.get_mut(&handle) else { return Err(StatusCode::Failure) };
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        file.write_all(&data).map_err(io)?;
        Ok(ok(id))
    }

    async fn close(&mut self, id: u32, handle: String) -> Result<Status, Self::Error> {
        self.open.remove(&handle);
        Ok(ok(id))
    }

    async fn opendir(&mut self, id: u32, path: String) -> Result<Handle, Self::Error> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(self.at(&path)?).map_err(io)? {
            let entry = entry.map_err(io)?;
            let metadata = entry.metadata().map_err(io)?;
            files.push(File::new(entry.file_name().to_string_lossy(), FileAttributes::from(&metadata)));
        }
        Ok(Handle { id, handle: self.handle(Open::Dir(files, false)) })
    }

    async fn readdir(&mut self, id: u32, handle: String) -> Result<Name, Self::Error> {
        match self.open.get_mut(&handle) {
            Some(Open::Dir(files, sent)) if !*sent => {
                *sent = true;
                Ok(Name { id, files: std::mem::take(files) })
            }
            Some(Open::Dir(..)) => Err(StatusCode::Eof),
            _ => Err(StatusCode::Failure),
        }
    }

    async fn remove(&mut self, id: u32, filename: String) -> Result<Status, Self::Error> {
        std::fs::remove_file(self.at(&filename)?).map_err(io)?;
        Ok(ok(id))
    }

    async fn mkdir(&mut self, id: u32, path: String, _: FileAttributes) -> Result<Status, Self::Error> {
        std::fs::create_dir(self.at(&path)?).map_err(io)?;
        Ok(ok(id))
    }

    async fn rename(&mut self, id: u32, from: String, to: String) -> Result<Status, Self::Error> {
        let (from, to) = (self.at(&from)?, self.at(&to)?);
        if to.exists() {
            return Err(StatusCode::Failure);
        }
        std::fs::rename(from, to).map_err(io)?;
        Ok(ok(id))
    }
}
